import { execFile } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
// tsx is a root devDependency; --import needs a URL, so resolve it to an absolute one.
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** Runs the real bin in a child node, loading workspace packages from their TypeScript source. */
function agentproto(args: string[], cwd?: string) {
  return run(process.execPath, ['--conditions=@agentproto/source', '--import', TSX, BIN, ...args], {
    encoding: 'utf8',
    cwd,
  });
}

describe('the agentproto bin', () => {
  it('prints the version of package.json when node runs it', async () => {
    const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const { stdout, stderr } = await agentproto(['--version']);
    expect(stdout).toBe(`${version}\n`);
    expect(stderr).toBe('');
  });

  it('sets the process exit code: 2 for an unknown command', async () => {
    const failure = await agentproto(['frobnicate']).then(
      () => undefined,
      (error: unknown) => error as { code: number; stdout: string; stderr: string },
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stdout).toBe('');
    expect(failure?.stderr).toMatch(/^agentproto: unknown command "frobnicate"\n/);
  });

  it('piped, an error is its line and its hint, with no colour', async () => {
    const cwd = await realpath(await mkdtemp(join(tmpdir(), 'agentproto-cli-')));
    try {
      await writeFile(join(cwd, 'a-file'), '');
      const failure = await agentproto(['cache', 'ls', '--store', 'a-file'], cwd).then(
        () => undefined,
        (error: unknown) => error as { code: number; stdout: string; stderr: string },
      );
      expect(failure?.code).toBe(1);
      expect(failure?.stderr).toMatch(/^agentproto: CACHE_ROOT_UNUSABLE: .*\nhint: .*\n$/);
      expect(failure?.stderr).not.toContain('\x1b');
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it('takes a relative --store from the working directory', async () => {
    const cwd = await realpath(await mkdtemp(join(tmpdir(), 'agentproto-cli-')));
    try {
      const { stdout } = await agentproto(['cache', 'ls', '--store', 'store'], cwd);
      expect(stdout).toBe(`0 objects, 0 keys, 0 links in ${join(cwd, 'store')}\n`);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it('code bundle ends with its whole report and exit status: 0 written, 1 refused', async () => {
    const cwd = await realpath(await mkdtemp(join(tmpdir(), 'agentproto-cli-')));
    try {
      await writeFile(join(cwd, 'main.py'), 'print(1)\n');
      await writeFile(join(cwd, 'tool.yaml'), 'code:\n  sources:\n    - local: main.py\n');
      const out = join(cwd, 'tool.tar.gz');
      const { stdout, stderr } = await agentproto(['code', 'bundle', 'tool.yaml', '--out', out, '--json'], cwd);
      expect(stderr).toBe('');
      const report = JSON.parse(stdout) as { out: string; files: number; compressedBytes: number };
      expect(report).toMatchObject({ out, files: 1, compressedBytes: (await readFile(out)).length });

      await writeFile(join(cwd, 'tool.yaml'), 'code:\n  sources:\n    - local: missing.py\n');
      const failure = await agentproto(['code', 'bundle', 'tool.yaml', '--out', out], cwd).then(
        () => undefined,
        (error: unknown) => error as { code: number; stdout: string; stderr: string },
      );
      expect(failure?.code).toBe(1);
      expect(failure?.stderr).toMatch(/^agentproto: AIP26_SOURCE_UNRESOLVED: .*missing\.py.*\n/);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
