import { createServer } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OciRegistry, startOciRegistry } from '@agentproto/testkit';
import { serveSkillsForFile } from './support/skills-server.js';
import { run } from './support/run.js';
import { scratchFolders } from './support/scratch.js';

const scratch = scratchFolders();
const skillsRepo = serveSkillsForFile({
  files: { 'skills/review/SKILL.md': '# review\n', 'skills/review/guide.md': 'guide\n' },
});
let registry: OciRegistry;

beforeAll(async () => {
  registry = await startOciRegistry();
});

afterAll(async () => {
  await registry?.close();
});

/** A loopback port nothing listens on. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('agentproto skills with --remote', () => {
  it('a second machine takes the skill from the registry, with no fetch of file content from git', async () => {
    const dir = await scratch();
    const declaration = join(dir, 'skills.yaml');
    await writeFile(declaration, `skills:\n  - ${skillsRepo.url}@v1#skills/review\n`);
    const remote = ['--remote', registry.url, '--repository', 'cli/skills', '--insecure-http'];

    const first = await run(['skills', 'prepare', declaration, '--store', join(dir, 'machine-a'), ...remote, '--json']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)[0]).toMatchObject({ name: 'review', from: 'origin' });

    skillsRepo.server.resetStats();
    const second = await run(['skills', 'prepare', declaration, '--store', join(dir, 'machine-b'), ...remote]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('(from the registry)');
    expect(second.stderr).toBe('');
    // One fetch of the commit and the trees on the way to the skill (no blob): the registry's
    // files are used only because they hash to the tree id git gave.
    expect(
      skillsRepo.server.stats.log
        .filter((entry) => entry.method === 'POST' && entry.command !== 'ls-refs')
        .map((entry) => entry.filter),
    ).toEqual(['combine:blob:none+tree:2']);
    const dirB = second.stdout.trim().split(/\s+/)[1]!;
    expect(await readFile(join(dirB, 'guide.md'), 'utf8')).toBe('guide\n');
  });

  it('a registry that is down is a warning on stderr; the skill comes from git', async () => {
    const dir = await scratch();
    const declaration = join(dir, 'skills.yaml');
    await writeFile(declaration, `skills:\n  - ${skillsRepo.url}@v1#skills/review\n`);
    const outcome = await run([
      'skills',
      'prepare',
      declaration,
      '--store',
      join(dir, 'cache'),
      '--remote',
      `http://127.0.0.1:${await deadPort()}`,
      '--repository',
      'cli/down',
      '--insecure-http',
    ]);
    expect(outcome.code, outcome.stderr).toBe(0);
    // The first failure is reported; the same failure again while the registry is bypassed is not.
    const warnings = outcome.stderr.split('\n').filter((line) => line.startsWith('warning:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^warning: \w+ at http:\/\/127\.0\.0\.1:\d+\/cli\/down failed \(REGISTRY_UNREACHABLE\): .*ECONNREFUSED/,
    );
    expect(outcome.stderr).toContain('fetching review at');
  });

  it('refuses --repository without --remote, and plain http without --insecure-http', async () => {
    const dir = await scratch();
    const declaration = join(dir, 'skills.yaml');
    await writeFile(declaration, `skills:\n  - ${skillsRepo.url}@v1#skills/review\n`);
    expect((await run(['skills', 'prepare', declaration, '--store', join(dir, 'c'), '--repository', 'x/y'])).code).toBe(
      2,
    );
    const plain = await run([
      'skills',
      'prepare',
      declaration,
      '--store',
      join(dir, 'c'),
      '--remote',
      registry.url,
      '--repository',
      'x/y',
    ]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('--insecure-http');
  });
});
