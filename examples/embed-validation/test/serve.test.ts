import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tarGz } from './support/archive.js';
import { post } from './support/http.js';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const children: ChildProcess[] = [];
const folders: string[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Starts the command the README gives, from the repository root, and waits for its "listening on" line. */
async function serve(args: string[]): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null> }> {
  const child = spawn(
    process.execPath,
    ['--conditions=@agentproto/source', '--import', 'tsx', 'examples/embed-validation/src/serve.ts', ...args],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then((code) => reject(new Error(`exited with ${code}: ${output}`)));
  });
  return { child, url, exited };
}

describe('the serve command', () => {
  it('listens on 127.0.0.1 on the port it is given, validates, and stops cleanly on SIGTERM', async () => {
    const tempRoot = await mkdtemp(join(tmpdir(), 'embed-validation-serve-'));
    folders.push(tempRoot);
    const { child, url, exited } = await serve(['--port', '0', '--temp-root', tempRoot, '--max-files', '3']);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const plugin = await tarGz([
      {
        name: 'plugin.json',
        body: '{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"acme.tools"}',
      },
    ]);
    expect(await post(`${url}/validate`, plugin)).toMatchObject({ status: 200, body: { ok: true, spec: '1.0.0' } });
    const many = await tarGz(Array.from({ length: 4 }, (_, i) => ({ name: `f${i}`, body: '' })));
    expect(await post(`${url}/validate`, many)).toMatchObject({
      status: 400,
      body: { error: { reason: 'too-many-files' } },
    });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(await readdir(tempRoot)).toEqual([]);
  });

  it('refuses an option that is not a number', async () => {
    await expect(serve(['--port', 'eighty'])).rejects.toThrow(/--port takes a whole number/);
  });
});
