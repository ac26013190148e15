import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defineCodeWithReport } from '../../src/index.js';
import { tempDir } from '../support/workspace.js';

/**
 * A host writing a bundle to a file is killed at a random point: the file at the path must be
 * the whole bundle or not there at all, never a prefix of it. Each round starts a process that
 * writes the bundle of a ~12 MB workspace with `defineCodeToFile` and kills it (SIGKILL) after
 * a random delay within the time a whole write takes, the rounds spread over that time.
 */
const ROUNDS = 12;

const script = fileURLToPath(new URL('../fixtures/define-code-to-file.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

function start(root: string, path: string): { child: ChildProcess; done: Promise<string> } {
  const child = spawn(process.execPath, ['--conditions=@agentproto/source', '--import', 'tsx', script, root, path], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk));
  const done = new Promise<string>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
  return { child, done };
}

describe('a bundle file, when the process writing it is killed', () => {
  it('is the whole bundle or absent, at every kill point', async () => {
    const root = await tempDir();
    for (let i = 0; i < 400; i++) {
      const lines: string[] = [];
      for (let n = 0; n < 420; n++) lines.push(`// ${sha256(Buffer.from(`${i}:${n}`))}\n`);
      await mkdir(join(root, 'src', `m${String(i).padStart(3, '0')}`), { recursive: true });
      await writeFile(join(root, 'src', `m${String(i).padStart(3, '0')}`, 'f.js'), lines.join(''));
    }
    const expected = await defineCodeWithReport({ workspaceRoot: root, code: { sources: [{ local: 'src/' }] } });
    const out = await tempDir();

    // How long a whole run takes here, start to exit: the kills fall within it.
    const path = join(out, 'bundle.tar.gz');
    let started = performance.now();
    const whole = JSON.parse(await start(root, path).done) as { ok: boolean; sha256: string };
    const wholeMs = performance.now() - started;
    expect(whole).toEqual({ ok: true, sha256: expected.report.sha256 });
    await rm(path);

    let killedWhileWriting = 0;
    let killedAfterRename = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const { child, done } = start(root, path);
      started = performance.now();
      // Random within one of ROUNDS equal slices of the span, each round its own: the kills
      // spread over all of it, so some land while the bundle is written whatever share of
      // the run that is (drawn over the whole span, all 12 missed it now and then).
      const delay = wholeMs * (0.3 + (0.7 * (round + Math.random())) / ROUNDS);
      await new Promise((resolve) => setTimeout(resolve, delay));
      child.kill('SIGKILL');
      await done;
      const names = await readdir(out);
      if (names.includes('bundle.tar.gz')) {
        // There: it must be the whole bundle.
        expect(sha256(await readFile(path)), `round ${round}, killed after ${delay.toFixed(0)} ms`).toBe(
          expected.report.sha256,
        );
        killedAfterRename += 1;
      }
      const partials = names.filter((name) => name.endsWith('.partial'));
      if (partials.length > 0) killedWhileWriting += 1;
      for (const name of names) await rm(join(out, name));
    }
    // The kills landed in both phases: while the temporary file was written, and after the rename.
    expect(killedWhileWriting, 'kills while the bundle was being written').toBeGreaterThan(0);
    expect(killedWhileWriting + killedAfterRename).toBeLessThanOrEqual(ROUNDS);
  }, 120_000);
});
