import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from './support/run.js';
import { scratchFolders } from './support/scratch.js';

const scratch = scratchFolders();

async function manifestIn(
  text: string,
  files: Record<string, string> = {},
): Promise<{ dir: string; manifest: string }> {
  const dir = await scratch();
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  await writeFile(join(dir, 'tool.yaml'), text);
  return { dir, manifest: join(dir, 'tool.yaml') };
}

const TOOL = `kind: tool
name: hello
code:
  sources:
    - inline: { path: tool.js, content: "console.log(require('fs').readFileSync('lib/a.txt', 'utf8').trim()); process.exit(Number(process.env.EXIT ?? 0))" }
    - local: lib/
run: tool.js
runner: { limits: { timeout_ms: 10000 } }
`;

describe('agentproto code', () => {
  it('code check resolves every source and reports it', async () => {
    const { manifest, dir } = await manifestIn(TOOL, { 'lib/a.txt': 'from lib\n' });
    const outcome = await run(['code', 'check', manifest, '--store', join(dir, 'cache'), '--json']);
    expect(outcome.code).toBe(0);
    const report = JSON.parse(outcome.stdout);
    expect(report.sources.map((s: { kind: string }) => s.kind)).toEqual(['inline', 'local']);
    expect(report.files).toBe(2);
  });

  it('code check exits 1 with the stable code of a bad manifest', async () => {
    const { manifest, dir } = await manifestIn(
      'code:\n  sources:\n    - inline: { path: ../escape.js, content: x }\nrun: tool.js\n',
    );
    const outcome = await run(['code', 'check', manifest, '--store', join(dir, 'cache')]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/^agentproto: AIP26_SOURCE_UNRESOLVED: sources\[0\]/);
  });

  it('code check refuses a run block that fails the schema, with its pointer', async () => {
    const { manifest, dir } = await manifestIn(
      'code: { sources: [ { inline: { path: a.js, content: x } } ] }\nrun: []\n',
    );
    const outcome = await run(['code', 'check', manifest, '--store', join(dir, 'cache')]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('AIP26_MANIFEST_INVALID');
    expect(outcome.stderr).toContain('/run');
  });

  it('code check refuses a runner language that contradicts the run file, inherited or not', async () => {
    const { manifest, dir } = await manifestIn('code: ./cw\nrun: tool.js\n', {
      'cw/manifest.yaml':
        'kind: code-workspace\ncode: { sources: [ { local: cw/tool.js } ] }\nrunner: { needs: { language: python } }\n',
      'cw/tool.js': '',
    });
    const outcome = await run(['code', 'check', manifest, '--store', join(dir, 'cache')]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('AIP26_RUNNER_CONFLICT');
  });

  it('code bundle writes the tar.gz GNU tar lists', async () => {
    const { manifest, dir } = await manifestIn(TOOL, { 'lib/a.txt': 'from lib\n' });
    const out = join(dir, 'bundle.tar.gz');
    const outcome = await run(['code', 'bundle', manifest, '--out', out, '--store', join(dir, 'cache')]);
    expect(outcome.code).toBe(0);
    expect(execFileSync('tar', ['-tzf', out]).toString().split('\n').filter(Boolean)).toEqual([
      'lib/',
      'lib/a.txt',
      'tool.js',
    ]);
  });

  it('code bundle replaces --out only with a whole bundle: a refused source leaves the file there and nothing beside it', async () => {
    const { manifest, dir } = await manifestIn(TOOL, { 'lib/a.txt': 'from lib\n' });
    const outDir = join(dir, 'out');
    await mkdir(outDir);
    const out = join(outDir, 'bundle.tar.gz');
    await writeFile(out, 'the previous bundle\n');
    await rm(join(dir, 'lib'), { recursive: true });
    const refused = await run(['code', 'bundle', manifest, '--out', out, '--store', join(dir, 'cache')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('AIP26_SOURCE_UNRESOLVED');
    expect(await readFile(out, 'utf8')).toBe('the previous bundle\n');
    expect(await readdir(outDir)).toEqual(['bundle.tar.gz']);

    await mkdir(join(dir, 'lib'));
    await writeFile(join(dir, 'lib/a.txt'), 'from lib\n');
    const written = await run(['code', 'bundle', manifest, '--out', out, '--store', join(dir, 'cache'), '--json']);
    expect(written.code).toBe(0);
    const report = JSON.parse(written.stdout);
    const bytes = await readFile(out);
    expect(report).toMatchObject({
      out,
      compressedBytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    expect(await readdir(outDir)).toEqual(['bundle.tar.gz']);
  });

  it('code run starts the bundle with only PATH and the --env pairs, and returns its exit status', async () => {
    const { manifest, dir } = await manifestIn(TOOL, { 'lib/a.txt': 'from lib\n' });
    const ok = await run(['code', 'run', manifest, '--store', join(dir, 'cache')]);
    expect(ok).toMatchObject({ code: 0, stdout: 'from lib\n' });
    const failing = await run(['code', 'run', manifest, '--env', 'EXIT=4', '--store', join(dir, 'cache')]);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toBe('agentproto: code run: the program exited with status 4\n');
  });
});
