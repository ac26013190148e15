import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runIsolated, spawnIsolated } from '../src/index.js';
import { PATH, marker, sleepers, testFolder, until } from './support.js';

const folder = testFolder('processes');
afterAll(() => folder.remove());

/**
 * A script that leaves a grandchild in a new session (setsid, then the parent exits: a
 * double fork), then does `rest`. The grandchild sleeps with an argument no other process
 * has, so the test can look for it from the host.
 */
function escapee(tag: string, rest: string): string {
  return `setsid /bin/sh -c '/bin/sleep 300.${tag} & exit 0' </dev/null >/dev/null 2>&1; /bin/sleep 0.2; ${rest}`;
}

describe('the PID namespace: nothing the command started outlives it', () => {
  it('a setsid + double-fork grandchild dies when the command exits, and exited settles only once it is gone', async () => {
    const tag = marker();
    const child = spawnIsolated({
      argv: ['/bin/sh', '-c', escapee(tag, 'echo started; /bin/sleep 0.5')],
      env: { PATH },
    });
    let seenRunning = false;
    child.stdout.on('data', () => {
      seenRunning = sleepers(tag).length > 0;
    });
    const exit = await child.exited;
    expect(exit.reason).toEqual({ kind: 'exit', code: 0 });
    // The check can fail: the grandchild was running while the command ran.
    expect(seenRunning).toBe(true);
    expect(sleepers(tag)).toEqual([]);
  });

  it('at timeout: the whole namespace is killed, the reason is timeout', async () => {
    const tag = marker();
    const result = await runIsolated({
      argv: ['/bin/sh', '-c', escapee(tag, 'echo started; exec /bin/sleep 300')],
      env: { PATH },
      timeoutMs: 1500,
    });
    expect(result.reason).toEqual({ kind: 'timeout' });
    expect(result.stdout.toString()).toBe('started\n');
    expect(sleepers(tag)).toEqual([]);
  });

  it('on abort: killed, the reason is aborted', async () => {
    const tag = marker();
    const controller = new AbortController();
    const child = spawnIsolated({
      argv: ['/bin/sh', '-c', escapee(tag, 'echo started; exec /bin/sleep 300')],
      env: { PATH },
      signal: controller.signal,
    });
    child.stdout.once('data', () => controller.abort());
    const exit = await child.exited;
    expect(exit.reason).toEqual({ kind: 'aborted' });
    expect(sleepers(tag)).toEqual([]);
  });

  it('an already aborted signal: nothing is left running', async () => {
    const tag = marker();
    const exit = await runIsolated({
      argv: ['/bin/sleep', `300.${tag}`],
      signal: AbortSignal.abort(),
    });
    expect(exit.reason).toEqual({ kind: 'aborted' });
    expect(sleepers(tag)).toEqual([]);
  });

  it('kill(): killed with everything it started, the reason is signal SIGKILL', async () => {
    const tag = marker();
    const child = spawnIsolated({
      argv: ['/bin/sh', '-c', escapee(tag, 'echo started; exec /bin/sleep 300')],
      env: { PATH },
    });
    child.stdout.once('data', () => child.kill());
    const exit = await child.exited;
    expect(exit.reason).toEqual({ kind: 'signal', signal: 'SIGKILL' });
    expect(sleepers(tag)).toEqual([]);
  });

  it('kill() right after spawning, before bwrap has reported anything: nothing is left running', async () => {
    for (let i = 0; i < 5; i++) {
      const tag = marker();
      const child = spawnIsolated({ argv: ['/bin/sleep', `300.${tag}`] });
      child.kill();
      const exit = await child.exited;
      expect(exit.reason).toEqual({ kind: 'signal', signal: 'SIGKILL' });
      // Give a sandbox that would have escaped the kill time to start its command.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(sleepers(tag)).toEqual([]);
    }
  });

  it('when the host process dies (SIGKILL), the sandbox dies with it (--die-with-parent)', async () => {
    const tag = marker();
    const script = join(folder.root, 'host.mts');
    writeFileSync(
      script,
      `import { spawnIsolated } from ${JSON.stringify(join(import.meta.dirname, '..', 'src', 'index.ts'))};
const child = spawnIsolated({ argv: ['/bin/sh', '-c', ${JSON.stringify(escapee(tag, 'echo started; exec /bin/sleep 300'))}] , env: { PATH: '/usr/bin:/bin' } });
child.stdout.pipe(process.stdout);
`,
    );
    const host = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: join(import.meta.dirname, '..', '..', '..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      host.stdout.once('data', () => resolve());
      host.once('exit', (code) => reject(new Error(`host exited ${code} before the sandbox started`)));
    });
    try {
      // The check can fail: the grandchild is running now.
      expect(sleepers(tag).length).toBe(1);
      host.kill('SIGKILL');
      expect(await until(() => sleepers(tag).length === 0, 5000)).toBe(true);
    } finally {
      host.kill('SIGKILL');
    }
  });
});

describe('how the command ended', () => {
  it.each([
    ['exit 0', { kind: 'exit', code: 0 }, 0, null],
    ['exit 3', { kind: 'exit', code: 3 }, 3, null],
    ['kill -TERM $$', { kind: 'signal', signal: 'SIGTERM' }, null, 'SIGTERM'],
    ['kill -KILL $$', { kind: 'signal', signal: 'SIGKILL' }, null, 'SIGKILL'],
  ])('%s: %o', async (script, reason, code, signal) => {
    const result = await runIsolated({ argv: ['/bin/sh', '-c', script] });
    expect(result).toMatchObject({ reason, code, signal });
  });

  it('standard input reaches the command and output is bounded by maxOutputBytes', async () => {
    const result = await runIsolated({ argv: ['/bin/cat'], stdin: 'x'.repeat(100_000), maxOutputBytes: 1000 });
    expect(result.reason).toEqual({ kind: 'exit', code: 0 });
    expect(result.stdout.length).toBe(1000);
  });
});
