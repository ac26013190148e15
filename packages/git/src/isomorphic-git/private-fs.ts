import * as fsp from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import type { PromiseFsClient } from 'isomorphic-git';
import { packProblem } from './pack-sizes.js';

type AnyFunction = (...args: never[]) => Promise<unknown>;

/**
 * The only file system isomorphic-git gets: node:fs/promises confined to one private
 * gitdir. Two guarantees:
 * - a path outside the gitdir is refused, so no bug or crafted ref can make it touch a
 *   user's repository or anything else;
 * - once the signal fires every call fails (reads as "not found", writes with an abort
 *   error), so a fetch still unwinding after an abort cannot recreate the folder while
 *   the caller removes it.
 */
export interface PackGuard {
  /** Most bytes one object may inflate to. */
  maxObject: number;
  /** Most bytes all objects of one pack may inflate to. */
  maxTotal: number;
  /** Called with the problem instead of writing the pack; it should throw. */
  refuse(problem: NonNullable<ReturnType<typeof packProblem>>): never;
}

export function privateFs(gitdir: string, signal: AbortSignal | undefined, packs?: PackGuard): PromiseFsClient {
  const root = resolve(gitdir);
  const checked = new WeakMap<Uint8Array, ReturnType<typeof packProblem>>();
  const inside = (path: unknown): string => {
    if (typeof path !== 'string') throw Object.assign(new Error('path must be a string'), { code: 'EINVAL' });
    const full = resolve(path);
    if (full !== root && !full.startsWith(root + sep)) {
      throw Object.assign(new Error('path outside the private gitdir'), { code: 'EACCES' });
    }
    return full;
  };
  const aborted = (kind: 'read' | 'write') => {
    if (!signal?.aborted) return;
    // Reads report "not found", which isomorphic-git treats as an answer, not as a crash to log.
    throw Object.assign(new Error('aborted'), { code: kind === 'read' ? 'ENOENT' : 'ABORT_ERR' });
  };
  const guard =
    (kind: 'read' | 'write', operation: (path: string, ...rest: never[]) => Promise<unknown>): AnyFunction =>
    async (path: unknown, ...rest: unknown[]) => {
      aborted(kind);
      return (operation as (path: string, ...rest: unknown[]) => Promise<unknown>)(inside(path), ...rest);
    };
  const read = (operation: (path: string, ...rest: never[]) => Promise<unknown>) => guard('read', operation);
  const write = (operation: (path: string, ...rest: never[]) => Promise<unknown>) => guard('write', operation);

  return {
    promises: {
      readFile: read(fsp.readFile),
      stat: read(fsp.stat),
      lstat: read(fsp.lstat),
      readdir: read(fsp.readdir),
      readlink: read(fsp.readlink),
      // isomorphic-git writes a fetched pack, then indexes it by inflating every object in
      // memory: what it would inflate to is checked first (a compressed bomb never gets there).
      writeFile: write(async (path: string, data: never, ...rest: never[]) => {
        if (packs && /\/objects\/pack\/pack-[0-9a-f]+\.pack$/.test(path) && (data as unknown) instanceof Uint8Array) {
          // isomorphic-git writes again after a failed write (making the folder first): checked once.
          const pack = data as unknown as Uint8Array;
          if (!checked.has(pack)) checked.set(pack, packProblem(pack, packs.maxObject, packs.maxTotal));
          const problem = checked.get(pack);
          if (problem) packs.refuse(problem);
        }
        return (fsp.writeFile as (...args: unknown[]) => Promise<void>)(path, data, ...rest);
      }),
      mkdir: write(fsp.mkdir),
      rmdir: write(fsp.rmdir),
      unlink: write(fsp.unlink),
      chmod: write(fsp.chmod),
      symlink: async (target: unknown, path: unknown) => {
        // A link in the gitdir could point anywhere; isomorphic-git has no use for one in a bare fetch.
        aborted('write');
        inside(path);
        throw Object.assign(new Error(`no symlinks in the private gitdir (${String(target)})`), { code: 'EPERM' });
      },
    },
  };
}
