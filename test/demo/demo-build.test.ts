import { mkdir, mkdtemp, readFile, realpath, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildOutcome, runChild, withoutPackageManagerEnv } from './support/child.js';

const START = fileURLToPath(new URL('../../scripts/demo-start.mjs', import.meta.url));

/**
 * A build that talks the way tsup does, on both streams, writes dist/index.js and notes its
 * package in builds.log at the workspace root; a source holding FAIL makes it fail after
 * printing the error.
 */
const BUILD = `import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
const { name } = JSON.parse(readFileSync('package.json', 'utf8'));
console.log('CLI tsup v9.0.0');
console.error('ESM Build start');
appendFileSync('../../builds.log', name + '\\n');
const source = readFileSync('src/index.js', 'utf8');
if (source.includes('FAIL')) {
  console.error('src/index.js:1:1: ERROR: this source does not compile');
  process.exit(3);
}
mkdirSync('dist', { recursive: true });
writeFileSync('dist/index.js', source);
console.log('ESM Build success in 5ms');
`;

let workspace = '';
beforeAll(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'agentproto-demo-build-')));
});
afterAll(async () => {
  if (workspace !== '') await rm(workspace, { recursive: true, force: true });
});

async function write(path: string, text: string): Promise<void> {
  await mkdir(dirname(join(workspace, path)), { recursive: true });
  await writeFile(join(workspace, path), text);
}

/** Sets a file's times `secondsAgo` in the past. */
async function age(path: string, secondsAgo: number): Promise<void> {
  const then = new Date(Date.now() - secondsAgo * 1000);
  await utimes(join(workspace, path), then, then);
}

/**
 * A workspace of two tour packages: @agentproto/testkit, whose dist/ is older than its src/,
 * and @agentproto/archive, which it depends on, built after its last change. Its tour prints
 * one line and its arguments.
 */
async function staleWorkspace(source: string): Promise<void> {
  await rm(workspace, { recursive: true, force: true });
  await mkdir(workspace);
  await write('package.json', JSON.stringify({ name: 'demo-fixture', private: true, packageManager: 'pnpm@12.4.2' }));
  await write('pnpm-workspace.yaml', 'packages:\n  - packages/*\n');
  await write(
    'scripts/demo.ts',
    "console.log('the tour starts here');\nconsole.log(process.argv.slice(2).join(' '));\n",
  );
  for (const [folder, name, dependencies] of [
    ['testkit', '@agentproto/testkit', { '@agentproto/archive': 'workspace:*' }],
    ['archive', '@agentproto/archive', {}],
  ] as const) {
    const manifest = {
      name,
      version: '0.0.0',
      private: true,
      type: 'module',
      exports: { '.': './dist/index.js' },
      scripts: { build: 'node build.mjs' },
      dependencies,
    };
    await write(`packages/${folder}/package.json`, JSON.stringify(manifest));
    await write(`packages/${folder}/build.mjs`, BUILD);
    await write(`packages/${folder}/src/index.js`, folder === 'testkit' ? source : 'export const built = true;\n');
    await write(`packages/${folder}/dist/index.js`, 'export const built = "long ago";\n');
    for (const file of ['package.json', 'src/index.js']) await age(`packages/${folder}/${file}`, 600);
    await age(`packages/${folder}/dist/index.js`, folder === 'testkit' ? 1200 : 60);
  }
}

/** `node scripts/demo-start.mjs` on that workspace, without the npm_* and pnpm_* variables `pnpm test` sets. */
function demoStart(args: string[]): Promise<ChildOutcome> {
  const env = withoutPackageManagerEnv({ AGENTPROTO_DEMO_WORKSPACE: workspace });
  return runChild(process.execPath, [START, ...args], { cwd: workspace, env });
}

async function builds(): Promise<string[]> {
  const log = await readFile(join(workspace, 'builds.log'), 'utf8').catch(() => '');
  return log.split('\n').filter(Boolean);
}

describe('pnpm demo builds a stale package first (scripts/demo-start.mjs)', () => {
  it('builds only the stale one, prints nothing of the build, and the tour starts first', async () => {
    await staleWorkspace('export const built = "now";\n');
    const first = await demoStart(['--json']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toBe('the tour starts here\n--json\n');
    expect(first.stderr).toBe('');
    expect(await builds()).toEqual(['@agentproto/testkit']);
    expect(await readFile(join(workspace, 'packages/testkit/dist/index.js'), 'utf8')).toBe(
      'export const built = "now";\n',
    );

    // Now current: nothing is built.
    const again = await demoStart([]);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('the tour starts here\n\n');
    expect(await builds()).toEqual(['@agentproto/testkit']);
  }, 60_000);

  it('a failing build prints its output in full and exits non-zero; the tour does not start', async () => {
    await staleWorkspace('FAIL\n');
    const outcome = await demoStart([]);
    expect(outcome.code).not.toBe(0);
    expect(outcome.stdout).not.toContain('the tour starts here');
    expect(outcome.stdout).toContain('CLI tsup v9.0.0');
    expect(outcome.stdout + outcome.stderr).toContain('src/index.js:1:1: ERROR: this source does not compile');
    expect(outcome.stderr).toMatch(
      /demo: building @agentproto\/testkit failed \(exit \d+\); the build's output is above\n$/,
    );
    expect(await builds()).toEqual(['@agentproto/testkit']);
  }, 60_000);
});
