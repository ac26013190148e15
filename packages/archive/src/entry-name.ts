import { ArchiveError } from './errors.js';

const DRIVE_LETTER = /^[A-Za-z]:/;

/**
 * The segments of a safe archive entry name, "." and empty segments dropped ("./a//b" is
 * ["a", "b"]; "./" is []). Refuses, whatever the entry type:
 *
 * - NUL anywhere (only a pax `path` can hold one; it would cut the name short on disk);
 * - an absolute name ("/x"), a Windows drive letter ("C:x", "c:/x") or any backslash: on
 *   Windows a backslash separates folders, so "..\\x" climbs there;
 * - any ".." segment, even one that stays inside ("a/../b"): nothing in a bundle or a
 *   GitHub tarball needs one, and refusing them all needs no reasoning about where it lands.
 *
 * These run on the final name, after pax `path` and GNU long-name headers were applied.
 */
export function safeEntrySegments(name: string): string[] {
  if (name.includes('\0')) throw new ArchiveError('nul-in-name', name, 'the name holds NUL');
  if (name.includes('\\')) throw new ArchiveError('backslash', name, 'the name holds a backslash');
  if (name.startsWith('/')) throw new ArchiveError('absolute-name', name, 'the name is absolute');
  if (DRIVE_LETTER.test(name)) throw new ArchiveError('drive-letter', name, 'the name starts with a drive letter');
  const segments: string[] = [];
  for (const segment of name.split('/')) {
    if (segment === '..') throw new ArchiveError('dot-dot', name, 'the name has a ".." segment');
    if (segment !== '' && segment !== '.') segments.push(segment);
  }
  return segments;
}
