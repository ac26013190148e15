import { createHash } from 'node:crypto';
import type { GitObjectReader, GitObjectType } from './engine.js';
import { GitCorruptObjectError, GitUnsafeTreeError } from './errors.js';

/**
 * Git objects read and verified by hand. isomorphic-git parses them too, but then the
 * bytes we hash would not be the bytes we use; here every object used for output is
 * hashed (`sha1("<type> <size>\0" + content)`) and compared with the id it was asked by,
 * so what is written is exactly the content-addressed tree of the commit, whatever the
 * engine or server did. The formats are small and stable (git's `tree.c`, `commit.c`).
 */
export function objectId(type: GitObjectType, content: Uint8Array): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

/** Reads `oid`, checks its type and hash; a missing or wrong object is a GitCorruptObjectError. */
export async function readVerified(reader: GitObjectReader, oid: string, type: GitObjectType): Promise<Uint8Array> {
  const object = await reader.read(oid);
  if (!object) throw new GitCorruptObjectError(oid, `missing from what the server sent (expected a ${type})`);
  if (object.type !== type) throw new GitCorruptObjectError(oid, `is a ${object.type}, expected a ${type}`);
  const actual = objectId(object.type, object.content);
  if (actual !== oid) throw new GitCorruptObjectError(oid, `content hashes to ${actual}`);
  return object.content;
}

/** The root tree id of a commit: its first header line, `tree <40 hex>`. */
export function commitTree(oid: string, content: Uint8Array): string {
  const header = Buffer.from(content.subarray(0, 46)).toString('latin1');
  const match = /^tree ([0-9a-f]{40})\n/.exec(header);
  if (!match?.[1]) throw new GitCorruptObjectError(oid, 'commit does not start with a tree line');
  return match[1];
}

export interface TreeEntry {
  /** As stored: `40000`, `100644`, `100755`, `120000`, `160000` (and the legacy `100664`). */
  mode: string;
  name: string;
  oid: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Entries of a tree object: `<mode> <name>\0<20-byte id>` repeated. `where` (the tree's
 * path, for messages) is relative to the fetched directory. Names must be UTF-8, since
 * they become file names through Node's string paths, where other bytes would be changed.
 */
export function parseTree(oid: string, content: Uint8Array, where: string): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let at = 0;
  while (at < content.length) {
    const space = content.indexOf(0x20, at);
    const nul = space < 0 ? -1 : content.indexOf(0x00, space + 1);
    if (space < 0 || nul < 0 || nul + 21 > content.length) throw new GitCorruptObjectError(oid, 'malformed tree entry');
    const mode = Buffer.from(content.subarray(at, space)).toString('latin1');
    if (!/^[0-7]{5,6}$/.test(mode)) throw new GitCorruptObjectError(oid, 'malformed tree entry mode');
    let name: string;
    try {
      name = utf8.decode(content.subarray(space + 1, nul));
    } catch {
      throw new GitUnsafeTreeError(join(where, '<invalid name>'), 'an entry name is not valid UTF-8');
    }
    entries.push({ mode, name, oid: Buffer.from(content.subarray(nul + 1, nul + 21)).toString('hex') });
    at = nul + 21;
  }
  return entries;
}

export function join(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}
