import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Host files a folder's owner must never get at: written by the test outside the folder,
 * each with a canary and one distinctive size, so a leak of bytes, of a size or of a name
 * is found by searching for them.
 */
export interface OutsideSecret {
  /** The outside folder. */
  dir: string;
  /** In every byte range of every file of the folder (each file is this, repeated). */
  canary: string;
  /** The size of every outside file: a number no inside file has. */
  size: number;
  /** A name that exists only outside. */
  onlyName: string;
  /** What of the secret `text` shows: empty when nothing. */
  leaksIn(text: string | Buffer): string[];
}

/** Writes `names` (relative paths) and one name of its own into `dir`, all with canary content of one distinctive size. */
export async function writeOutsideSecret(dir: string, names: readonly string[], size = 13_337): Promise<OutsideSecret> {
  const canary = `OUTSIDE-CANARY-${randomBytes(8).toString('hex')}-`;
  const onlyName = `zz-only-outside-${randomBytes(4).toString('hex')}.txt`;
  const body = Buffer.alloc(size, canary);
  for (const name of [...names, onlyName]) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), body);
  }
  return {
    dir,
    canary,
    size,
    onlyName,
    leaksIn(text) {
      const haystack = typeof text === 'string' ? text : text.toString('latin1');
      const found: string[] = [];
      // Any 24-byte stretch of the repeated canary is in every leaked range of a file.
      if (haystack.includes(canary.slice(0, 24)) || haystack.includes(canary.slice(-24))) found.push('canary bytes');
      if (haystack.includes(onlyName)) found.push('an outside name');
      if (new RegExp(`(^|[^0-9])${size}([^0-9]|$)`).test(haystack)) found.push('the outside size');
      if (haystack.includes(dir)) found.push('the outside path');
      return found;
    },
  };
}
