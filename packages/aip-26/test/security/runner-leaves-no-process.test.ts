import { randomInt } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defineCode, subprocessRunner } from '../../src/index.js';
import { makeWorkspace } from '../support/workspace.js';

async function bundleOf(script: string): Promise<Buffer> {
  const workspaceRoot = await makeWorkspace({});
  return defineCode({ workspaceRoot, code: { sources: [{ inline: { path: 'run.sh', content: script } }] } });
}

/** A number no other process on the machine has in its command line: `sleep <marker>` is ours. */
function marker(): string {
  return `${1000 + randomInt(1000)}.${randomInt(1_000_000_000)}`;
}

/** Live processes (zombies are dead) whose command line holds `mark`. */
function alive(mark: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'latin1').includes(mark)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') found.push(Number(name));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/** Every escape a bundle might try, each process named by `mark` in its command line. */
function escapes(mark: string, isolation: 'auto' | 'process-tree' = 'auto'): Record<string, string> {
  return {
    // Re-parented to init with no trace of the run in its environment: only a PID namespace
    // holds it (the process-tree walk catches it only if a poll saw it before its parent exited).
    ...(isolation === 'auto'
      ? {
          'double fork with a cleared environment': `(env -i /usr/bin/setsid /bin/sh -c 'exec /bin/sleep ${mark}' </dev/null >/dev/null 2>&1 &)`,
        }
      : {}),
    setsid: `setsid sleep ${mark} </dev/null >/dev/null 2>&1 &`,
    'setsid holding stdout': `setsid sleep ${mark} &`,
    'double fork into a new session': `(setsid sh -c 'sleep ${mark} & exit 0' &) ; sleep 0.2`,
    'ignores SIGTERM': `setsid sh -c "trap '' TERM HUP INT; exec sleep ${mark}" </dev/null >/dev/null 2>&1 &`,
    // 2^7 - 1 processes, each also sleeping: bounded by the depth.
    'fork bomb (bounded)': `bomb() { if [ "$1" -gt 0 ]; then bomb $(( $1 - 1 )) & bomb $(( $1 - 1 )) & fi; exec sleep ${mark}; }; bomb 6 &`,
  };
}

describe.each([['auto'], ['process-tree']] as const)(
  'subprocessRunner, isolation %s: nothing the bundle started outlives the run',
  (isolation) => {
    const runner = subprocessRunner({ isolation });

    it.each(Object.keys(escapes('0', isolation)))(
      'after a timeout, no process is left from a bundle that uses %s',
      async (name) => {
        const mark = marker();
        const script = `${escapes(mark)[name]}\nsleep 0.3\nexec sleep ${mark}\n`;
        const result = await runner.run({
          bundle: await bundleOf(script),
          run: { exec: ['sh', 'run.sh'] },
          env: { PATH: '/usr/bin:/bin' },
          timeoutMs: 1500,
        });
        expect(result.timedOut).toBe(true);
        expect(alive(mark)).toEqual([]);
      },
    );

    it('after an abort, no process is left from a bundle that uses setsid and a double fork', async () => {
      const mark = marker();
      const script = `${escapes(mark, isolation).setsid}\n${escapes(mark, isolation)['double fork into a new session']}\nexec sleep ${mark}\n`;
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('stop')), 800);
      const result = await runner.run({
        bundle: await bundleOf(script),
        run: { exec: ['sh', 'run.sh'] },
        env: { PATH: '/usr/bin:/bin' },
        timeoutMs: 20_000,
        signal: controller.signal,
      });
      expect(result).toMatchObject({ timedOut: false, signal: 'SIGKILL' });
      expect(alive(mark)).toEqual([]);
    });

    it.each(Object.keys(escapes('0', isolation)))(
      'after a normal exit, no process is left from a bundle that uses %s, and the run returns at once',
      async (name) => {
        const mark = marker();
        const script = `${escapes(mark)[name]}\nsleep 0.3\necho done\n`;
        const started = Date.now();
        const result = await runner.run({
          bundle: await bundleOf(script),
          run: { exec: ['sh', 'run.sh'] },
          env: { PATH: '/usr/bin:/bin' },
          timeoutMs: 20_000,
        });
        expect(result).toMatchObject({ exitCode: 0, timedOut: false });
        expect(result.stdout.toString()).toContain('done');
        // A daemon still holding stdout did not keep the run waiting until the timeout.
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(alive(mark)).toEqual([]);
      },
    );
  },
);
