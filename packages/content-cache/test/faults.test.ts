import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ContentCacheError,
  type StoreFs,
  StoreIOError,
  nodeStoreFs,
  openContentStore,
} from '@agentproto/content-cache';
import { storeState, visibleProblems } from './support/inspect.js';
import { tempDir } from './support/temp.js';

/**
 * A StoreFs that fails exactly one call, the `failAt`-th after it is armed, with an errno
 * error; every other call goes to the real filesystem.
 */
function faultyFs() {
  const state = { armed: false, count: 0, failAt: -1, errno: 'EIO', failed: '' };
  const fs = new Proxy(nodeStoreFs, {
    get(target, name: keyof StoreFs) {
      const real = target[name] as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        if (state.armed && state.count++ === state.failAt) {
          state.failed = `${String(name)} ${String(args[0])}`;
          const error = Object.assign(new Error(`${state.errno}: injected failure, ${String(name)}`), {
            code: state.errno,
          });
          if (String(name).endsWith('Sync')) throw error;
          return Promise.reject(error);
        }
        return real(...args);
      };
    },
  });
  return { fs, state };
}

const key = {
  provider: 'git',
  declaration: { source: 'https://example.test/r.git', path: 'skills/a' },
  version: 'c1',
  contentId: 't1',
};

/** A fill using both the context writer and plain calls, with a folder and an inside link. */
async function fill(destination: string, ctx: { writeFile: (p: string, d: string) => Promise<void> }) {
  await ctx.writeFile('SKILL.md', '# a\n');
  await mkdir(join(destination, 'scripts'), { recursive: true });
  await writeFile(join(destination, 'scripts/run.sh'), 'echo\n', { mode: 0o755 });
  await symlink('scripts/run.sh', join(destination, 'run'));
}

async function stepsOfOneAcquisition(): Promise<number> {
  const { fs, state } = faultyFs();
  const store = await openContentStore({ root: join(await tempDir(), 'store'), fs });
  state.armed = true;
  await store.acquire(key, fill);
  return state.count;
}

describe('fault injection', () => {
  it.each(['ENOSPC', 'EACCES', 'EIO'])(
    'fails every filesystem step in turn with %s: a typed error, nothing half-published, no staging left',
    async (errno) => {
      const steps = await stepsOfOneAcquisition();
      expect(steps).toBeGreaterThan(20);
      let typed = 0;
      for (let failAt = 0; failAt < steps; failAt++) {
        const { fs, state } = faultyFs();
        const root = join(await tempDir(), 'store');
        const store = await openContentStore({ root, fs });
        Object.assign(state, { armed: true, failAt, errno });
        const outcome = await store.acquire(key, fill).then(
          () => undefined,
          (error: unknown) => error,
        );
        const where = `step ${failAt} (${state.failed})`;
        if (outcome !== undefined) {
          expect(outcome, where).toBeInstanceOf(ContentCacheError);
          typed += 1;
          const committed = outcome instanceof StoreIOError && outcome.committed;
          if (outcome instanceof StoreIOError) expect(outcome.errno, where).toBe(errno);
          if (!committed) expect(storeState(root), where).toEqual({ objects: [], keys: [], links: [], staging: [] });
        }
        // Whatever failed, nothing visible is incomplete, no staging folder is left, every
        // published object verifies, and the next acquisition succeeds.
        expect(visibleProblems(root), where).toEqual([]);
        expect(storeState(root).staging, where).toEqual([]);
        const fresh = await openContentStore({ root });
        expect((await fresh.verify()).corrupt, where).toEqual([]);
        const next = await fresh.acquire(key, fill);
        expect(next.files, where).toBe(2);
      }
      // Probes whose failure is harmless (is the link already right? is there trash to empty?)
      // may let the acquisition succeed; every step that matters fails it.
      expect(typed).toBeGreaterThan(steps * 0.75);
    },
  );
});
