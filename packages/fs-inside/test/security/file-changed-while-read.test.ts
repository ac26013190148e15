import { closeSync, openSync, writeSync } from 'node:fs';
import { appendFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '@agentproto/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotInsideError, openInside, readDescriptorInto } from '../../src/index.js';

/**
 * A file is read at the size it was measured at, or refused: the bytes read and the end
 * after them come from the same read, so a file that grew or shrank between its fstat and
 * its read is `changed`, whatever its size and wherever the change falls.
 */
describe('a file that changes between its measure and its read', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    dir = await tempDir('inside-changed-');
  });
  afterAll(() => dir.cleanup());

  /** Opens `name` proven inside, lets `change` run after the fstat, then reads at the measured size. */
  async function readAfter(name: string, content: Buffer, change: (path: string) => Promise<void>): Promise<unknown> {
    await writeFile(join(dir.path, name), content);
    const { fd, stats } = openInside(dir.path, name);
    try {
      await change(join(dir.path, name));
      const target = Buffer.alloc(stats.size);
      readDescriptorInto(fd, target, name);
      return target;
    } catch (error) {
      return error;
    } finally {
      closeSync(fd);
    }
  }

  const sizes = [0, 1, 511, 4096, 65_537, 1 << 20];

  it.each(sizes)('reads a file of %i bytes that did not change, all of it', async (size) => {
    const content = Buffer.alloc(size, 0x61);
    for (let i = 0; i < size; i++) content[i] = (i * 7) & 0xff;
    const read = await readAfter(`same-${size}`, content, async () => {});
    expect(Buffer.isBuffer(read) && read.equals(content)).toBe(true);
  });

  it.each(sizes)('refuses a file of %i bytes that grew by one byte after it was measured', async (size) => {
    const error = await readAfter(`grew-${size}`, Buffer.alloc(size, 0x62), (path) => appendFile(path, 'x'));
    expect(error).toBeInstanceOf(NotInsideError);
    expect(error).toMatchObject({ reason: 'changed', path: `grew-${size}` });
  });

  it.each(sizes.filter((size) => size > 0))(
    'refuses a file of %i bytes that lost its last byte after it was measured',
    async (size) => {
      const error = await readAfter(`shrank-${size}`, Buffer.alloc(size, 0x63), (path) => truncate(path, size - 1));
      expect(error).toMatchObject({ reason: 'changed', path: `shrank-${size}` });
    },
  );

  it('refuses a file emptied after it was measured, and names the path only', async () => {
    const error = await readAfter('emptied', Buffer.from('secret-sized content'), (path) => truncate(path, 0));
    expect(error).toMatchObject({ reason: 'changed', path: 'emptied' });
    expect((error as Error).message).toBe('"emptied" changed while it was being read');
  });

  it('refuses a file that grew by a whole megabyte while its bytes stayed the same', async () => {
    const error = await readAfter('grew-much', Buffer.alloc(4096, 0x64), async (path) => {
      const fd = openSync(path, 'a');
      try {
        writeSync(fd, Buffer.alloc(1 << 20, 0x64));
      } finally {
        closeSync(fd);
      }
    });
    expect(error).toMatchObject({ reason: 'changed', path: 'grew-much' });
  });
});
