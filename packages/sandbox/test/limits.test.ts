import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runIsolated, spawnIsolated } from '../src/index.js';
import { PATH, marker, sleepers, testFolder } from './support.js';

const folder = testFolder('limits');
afterAll(() => folder.remove());

describe('limits (per-process rlimits)', () => {
  it('memoryMb: an allocation past it fails, the reason is memory', async () => {
    const result = await runIsolated({
      argv: ['/usr/bin/node', '-e', 'const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1));'],
      env: { PATH },
      limits: { memoryMb: 192 },
      timeoutMs: 30_000,
    });
    expect(result.reason).toMatchObject({ kind: 'memory' });
  });

  it('memoryMb: a command that stays under it runs to the end', async () => {
    const result = await runIsolated({
      argv: ['/usr/bin/node', '-e', 'const b = Buffer.alloc(32 << 20, 1); console.log(b.length);'],
      env: { PATH },
      limits: { memoryMb: 192 },
      timeoutMs: 30_000,
    });
    expect(result.reason).toEqual({ kind: 'exit', code: 0 });
    expect(result.stdout.toString()).toBe(`${32 << 20}\n`);
  });

  it('an "out of memory" message is not the memory reason when no memoryMb was set', async () => {
    const result = await runIsolated({ argv: ['/bin/sh', '-c', 'echo "fatal: out of memory" >&2; exit 1'] });
    expect(result.reason).toEqual({ kind: 'exit', code: 1 });
  });

  it('cpuMs: a busy loop is stopped after about that much CPU time, the reason is cpu', async () => {
    const result = await runIsolated({
      argv: ['/bin/sh', '-c', 'while :; do :; done'],
      limits: { cpuMs: 1000 },
      timeoutMs: 30_000,
    });
    expect(result.reason).toEqual({ kind: 'cpu', signal: 'SIGXCPU' });
    expect(result.durationMs).toBeGreaterThanOrEqual(900);
  });

  it('maxFileMb: writing past it stops the writer (SIGXFSZ) and the file holds no more than the cap', async () => {
    const scratch = folder.writable('fsize');
    const result = await runIsolated({
      argv: ['/usr/bin/dd', 'if=/dev/zero', 'of=/scratch/big', 'bs=1M', 'count=3'],
      mounts: [{ source: scratch, target: '/scratch', writable: true }],
      limits: { maxFileMb: 1 },
      timeoutMs: 30_000,
    });
    expect(result.reason).toEqual({ kind: 'signal', signal: 'SIGXFSZ' });
    expect(statSync(join(scratch, 'big')).size).toBe(1024 * 1024);
  });

  /** Starts up to 60 sleeps at once and reports the most seen alive at the same time. */
  async function forkBomb(maxProcesses: number | undefined): Promise<{ most: number; stderr: string }> {
    const tag = marker();
    const child = spawnIsolated({
      argv: [
        '/bin/sh',
        '-c',
        `i=0; while [ $i -lt 60 ]; do /bin/sleep 300.${tag} & i=$((i + 1)); done; echo spawned; /bin/sleep 300`,
      ],
      env: { PATH },
      limits: maxProcesses === undefined ? undefined : { maxProcesses },
      timeoutMs: 15_000,
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    let most = 0;
    const watch = setInterval(() => {
      most = Math.max(most, sleepers(tag).length);
    }, 50);
    // Once the loop is done every sleep it could start is forked, but a fork may not have run
    // its exec yet (a loaded machine): count until the count holds still for 500 ms, then end it.
    child.stdout.on('data', async (chunk: Buffer) => {
      if (!chunk.toString().includes('spawned')) return;
      let last = -1;
      for (let still = 0, polls = 0; still < 10 && polls < 200; polls += 1) {
        const now = sleepers(tag).length;
        most = Math.max(most, now);
        still = now === last ? still + 1 : 0;
        last = now;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      child.kill();
    });
    await child.exited;
    clearInterval(watch);
    expect(sleepers(tag)).toEqual([]);
    return { most, stderr };
  }

  it('maxProcesses: a fork bomb is bounded (and the same script without the cap is not)', async () => {
    const capped = await forkBomb(8);
    // RLIMIT_NPROC counts the account's processes on the whole machine: other sandboxes of
    // this test run, as the same account, can free room while this one runs.
    expect(capped.most).toBeLessThanOrEqual(20);
    expect(capped.stderr).toMatch(/fork/i);
    const free = await forkBomb(undefined);
    expect(free.most).toBe(60);
  });
});
