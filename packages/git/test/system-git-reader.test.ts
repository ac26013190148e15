import { describe, expect, it } from 'vitest';
import { BATCH_BYTES, BatchObjectReader, type LocalGit } from '../src/system-git/reader.js';

/** A gitdir in memory behind fake `cat-file --batch-check` / `--batch` runs, counting them. */
function fakeGit(objects: Map<string, Buffer>) {
  const runs: Array<{ args: string[]; ids: string[] }> = [];
  const git: LocalGit = async (args, stdin) => {
    const ids = (stdin ?? '').split('\n').filter((line) => line !== '');
    runs.push({ args: [...args], ids });
    const parts: Buffer[] = [];
    for (const id of ids) {
      const content = objects.get(id);
      if (!content) parts.push(Buffer.from(`${id} missing\n`));
      else if (args.includes('--batch-check')) parts.push(Buffer.from(`${id} blob ${content.length}\n`));
      else parts.push(Buffer.from(`${id} blob ${content.length}\n`), content, Buffer.from('\n'));
    }
    return { code: 0, stdout: Buffer.concat(parts), stderr: Buffer.alloc(0) };
  };
  return { git, runs };
}

const id = (n: number) => n.toString(16).padStart(40, '0');

describe("the system engine's object reader", () => {
  it('loads announced objects in batches of bounded size, one cat-file run per batch, in the order announced', async () => {
    const size = 6 * 1024 * 1024;
    const objects = new Map(Array.from({ length: 5 }, (_, n) => [id(n + 1), Buffer.alloc(size, n)] as const));
    const { git, runs } = fakeGit(objects);
    const reader = new BatchObjectReader(
      '/gitdir',
      git,
      async () => {
        throw new Error('nothing is missing');
      },
      undefined,
    );
    await reader.prefetch([1, 2, 3, 4, 5].map(id));
    expect(runs.map((run) => run.args.join(' '))).toEqual(['cat-file --batch-check']);
    for (const n of [1, 2, 3, 4, 5]) expect((await reader.read(id(n)))?.content[0]).toBe(n - 1);
    const loads = runs.filter((run) => run.args.includes('--batch'));
    const perBatch = Math.floor(BATCH_BYTES / size);
    expect(loads.map((run) => run.ids.length)).toEqual([perBatch, perBatch, 5 - 2 * perBatch]);
    expect(loads.flatMap((run) => run.ids)).toEqual([1, 2, 3, 4, 5].map(id));
  });

  it('fetches the missing ones in one request, and reports what the server did not send as absent without asking again', async () => {
    const objects = new Map([[id(1), Buffer.from('one')]]);
    const { git, runs } = fakeGit(objects);
    const fetched: string[][] = [];
    const reader = new BatchObjectReader(
      '/gitdir',
      git,
      async (oids) => {
        fetched.push([...oids]);
        objects.set(id(2), Buffer.from('two'));
      },
      undefined,
    );
    await reader.prefetch([id(1), id(2), id(3), id(2), 'not-an-id']);
    expect(fetched).toEqual([[id(2), id(3)]]);
    expect(Buffer.from((await reader.read(id(2)))?.content ?? []).toString()).toBe('two');
    const before = runs.length;
    expect(await reader.read(id(3))).toBeUndefined();
    expect(await reader.read('HEAD:secret')).toBeUndefined();
    expect(runs.length).toBe(before);
  });

  it('reads an object nobody announced on its own', async () => {
    const { git, runs } = fakeGit(new Map([[id(9), Buffer.from('nine')]]));
    const reader = new BatchObjectReader('/gitdir', git, async () => undefined, undefined);
    expect((await reader.read(id(9)))?.type).toBe('blob');
    expect(await reader.read(id(8))).toBeUndefined();
    expect(runs.map((run) => run.ids)).toEqual([[id(9)], [id(8)]]);
  });

  it("turns a failing cat-file into GIT_IO with git's message in the cause", async () => {
    const reader = new BatchObjectReader(
      '/gitdir',
      async () => ({ code: 128, stdout: Buffer.alloc(0), stderr: Buffer.from('fatal: not a git repository') }),
      async () => undefined,
      undefined,
    );
    const error = await reader.read(id(1)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'GIT_IO', path: '/gitdir' });
    expect(String((error as Error).cause)).toContain('not a git repository');
  });
});
