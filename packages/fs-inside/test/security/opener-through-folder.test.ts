import { closeSync, readFileSync, readdirSync, readlinkSync, renameSync, symlinkSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderings, startLinkSwapper, tempDir, writeOutsideSecret } from '@agentproto/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotInsideError, insideOpener, openInside, readDescriptorInto, realRootOf } from '../../src/index.js';

/**
 * insideOpener opens a file by its one name in its folder's proven descriptor, without a
 * proof of its own: these attack that shortcut. A folder swapped for a link, a folder moved
 * away while its descriptor is held, a file that is a link: no handle it returns reads a
 * byte of the outside, and its refusals are openInside's.
 */
describe('files opened through their folder descriptor', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    dir = await tempDir('inside-opener-');
  });
  afterAll(() => dir.cleanup());

  async function scene() {
    const root = join(dir.path, `root-${Math.random().toString(36).slice(2)}`);
    const names = ['a.txt', 'b.txt', 'c.txt'];
    const outside = await writeOutsideSecret(join(root, '..', `outside-${Math.random().toString(36).slice(2)}`), [
      ...names,
      'only-outside.txt',
    ]);
    await mkdir(join(root, 'src/lib'), { recursive: true });
    for (const name of names) await writeFile(join(root, 'src/lib', name), `inside ${name}\n`);
    await mkdir(join(root, '.park'));
    await symlink(outside.dir, join(root, '.park/lib'));
    return { root: realRootOf(root), outside, names };
  }

  function read(handle: { fd: number; stats: { size: number } }, rel: string): Buffer {
    try {
      const bytes = Buffer.alloc(handle.stats.size);
      readDescriptorInto(handle.fd, bytes, rel);
      return bytes;
    } finally {
      closeSync(handle.fd);
    }
  }

  it('opens what openInside opens, and refuses what it refuses, with the same errors', async () => {
    const { root, outside } = await scene();
    await symlink('a.txt', join(root, 'src/lib/link-inside.txt'));
    await symlink(join(outside.dir, 'a.txt'), join(root, 'src/lib/link-out.txt'));
    const opener = insideOpener(root);
    try {
      for (const rel of ['src/lib/a.txt', 'src/lib/b.txt', 'src/lib/link-inside.txt', 'src/lib']) {
        const handle = opener.open(rel);
        expect(readlinkSync(`/proc/self/fd/${handle.fd}`)).toBe(
          join(root, rel === 'src/lib/link-inside.txt' ? 'src/lib/a.txt' : rel),
        );
        if (handle.stats.isFile()) expect(read(handle, rel)).toEqual(readFileSync(join(root, rel)));
        else closeSync(handle.fd);
      }
      for (const rel of ['src/lib/link-out.txt', '.park/lib/a.txt', 'src/lib/missing.txt', 'src/none/a.txt']) {
        const expected = catching(() => openInside(root, rel));
        const got = catching(() => opener.open(rel));
        expect(got).toBeInstanceOf(Error);
        expect(got).toEqual(expected);
        expect((got as Error).constructor).toBe((expected as Error).constructor);
        for (const text of renderings(got)) expect(outside.leaksIn(text)).toEqual([]);
      }
      expect(catching(() => opener.open('.park/lib/a.txt'))).toMatchObject({ reason: 'escapes' });
    } finally {
      opener.close();
    }
  });

  it('never reads the outside through a folder moved away and replaced by a link while its descriptor is held', async () => {
    const { root, outside } = await scene();
    const opener = insideOpener(root);
    try {
      read(opener.open('src/lib/a.txt'), 'src/lib/a.txt'); // the folder's descriptor is now held
      // The owner moves the folder away (still inside) and puts a link out in its place,
      // before the event loop turns (the opener lets the folder go then).
      renameSync(join(root, 'src/lib'), join(root, 'src/moved'));
      symlinkSync(outside.dir, join(root, 'src/lib'));
      expect(readdirSync('/proc/self/fd').map((fd) => readlinkOrNot(fd))).toContain(join(root, 'src/moved'));
      // A name the held folder has: its own file, inside, never the outside one of that name.
      const b = read(opener.open('src/lib/b.txt'), 'src/lib/b.txt');
      expect(b.toString()).toBe('inside b.txt\n');
      expect(outside.leaksIn(b)).toEqual([]);
      // A name only the outside folder has: refused as openInside refuses it, by the path asked for.
      const error = catching(() => opener.open('src/lib/only-outside.txt'));
      expect(error).toBeInstanceOf(NotInsideError);
      expect(error).toMatchObject({ reason: 'escapes', path: 'src/lib/only-outside.txt' });
      for (const text of renderings(error)) expect(outside.leaksIn(text)).toEqual([]);
    } finally {
      opener.close();
    }
  });

  it('holds no descriptor once the event loop turns, or once closed', async () => {
    const { root } = await scene();
    await writeFile(join(root, 'src/top.txt'), 'top\n');
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    const opener = insideOpener(root);
    closeSync(opener.open('src/lib/a.txt').fd);
    expect(open()).toBe(before + 1); // the folder
    await new Promise((resolve) => setImmediate(resolve));
    expect(open()).toBe(before);
    closeSync(opener.open('src/lib/b.txt').fd);
    // A file of another folder: that folder replaces the one held.
    closeSync(opener.open('src/top.txt').fd);
    expect(open()).toBe(before + 1);
    opener.close();
    expect(open()).toBe(before);
  });

  it('returns no handle outside the root while a folder is exchanged with a link out in a tight loop', async () => {
    const { root, outside, names } = await scene();
    const swapper = await startLinkSwapper(join(root, 'src/lib'), join(root, '.park/lib'));
    const leaks: string[] = [];
    const untyped: string[] = [];
    let opened = 0;
    let refused = 0;
    try {
      const started = performance.now();
      for (let round = 0; performance.now() - started < 2_000; round++) {
        const opener = insideOpener(root);
        try {
          for (const name of names) {
            const rel = `src/lib/${name}`;
            let handle: { fd: number; stats: { size: number } };
            try {
              handle = opener.open(rel);
            } catch (error) {
              refused += 1;
              if (
                !(error instanceof NotInsideError) &&
                !['ENOENT', 'ENOTDIR'].includes((error as { code?: string }).code ?? '')
              )
                untyped.push(String(error));
              for (const text of renderings(error))
                if (outside.leaksIn(text).length > 0) leaks.push(text.slice(0, 200));
              continue;
            }
            const where = readlinkSync(`/proc/self/fd/${handle.fd}`);
            if (!where.startsWith(`${root}/`)) leaks.push(`round ${round}: ${rel} opened at ${where}`);
            const bytes = read(handle, rel);
            opened += 1;
            if (outside.leaksIn(bytes).length > 0) leaks.push(`round ${round}: ${rel} read outside bytes`);
          }
        } finally {
          opener.close();
        }
        if (round % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      expect(await swapper.stop()).toBeGreaterThan(100);
    }
    expect(leaks.slice(0, 5)).toEqual([]);
    expect(untyped.slice(0, 5)).toEqual([]);
    // Both happened: files read through the held folder, and refusals of the link.
    expect(opened).toBeGreaterThan(10);
    expect(refused).toBeGreaterThan(10);
  });
});

/** Where an open descriptor of this process is, or '' once it is gone. */
function readlinkOrNot(fd: string): string {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return '';
  }
}

function catching(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}
