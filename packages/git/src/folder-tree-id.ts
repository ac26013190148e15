import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, lstat, open, readdir, readlink } from 'node:fs/promises';
import { throwIfAborted } from './abort.js';
import { GitIoError, GitUnsafeTreeError } from './errors.js';
import { type GitTreeEntry, gitBlobId, gitTreeId } from './tree-id.js';

const CHUNK = 1024 * 1024;

/**
 * The git tree id of a folder on disk, as `git add -A && git write-tree` would compute it
 * with `core.fileMode` and `core.symlinks` on: a file is `100755` when any execute bit is
 * set, else `100644`; a link is a blob of its target; a folder is a tree (an empty one is
 * the empty tree, which git never writes, so a folder added to a tree changes its id). A
 * pipe, socket or device is refused. Names and link targets are taken as bytes.
 *
 * Meant for a folder the caller owns (a store's staging folder): files are opened without
 * following links, and one whose size changed while it was hashed is an error, not a hash.
 */
export async function folderTreeId(root: string, options: { signal?: AbortSignal } = {}): Promise<string> {
  const { signal } = options;
  // Post-order with an explicit stack: a very deep folder cannot exhaust the call stack.
  const stack: { path: string; rel: string; names?: Buffer[]; entries: GitTreeEntry[] }[] = [
    { path: root, rel: '', entries: [] },
  ];
  let id = '';
  while (stack.length > 0) {
    throwIfAborted(signal, 'folderTreeId');
    const top = stack[stack.length - 1]!;
    if (top.names === undefined) {
      top.names = (await io(top.path, 'read', () => readdir(top.path, { encoding: 'buffer' }))).reverse();
    }
    const name = top.names.pop();
    if (name === undefined) {
      stack.pop();
      id = gitTreeId(top.entries);
      stack[stack.length - 1]?.entries.push({
        name: Buffer.from(top.path.slice(top.path.lastIndexOf('/') + 1), 'utf8'),
        mode: '40000',
        oid: id,
      });
      continue;
    }
    // Paths through Node are strings; a name that is not UTF-8 would be changed on the way.
    const text = name.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(name))
      throw new GitUnsafeTreeError(join(top.rel, '<invalid name>'), 'an entry name is not valid UTF-8');
    const path = `${top.path}/${text}`;
    const rel = join(top.rel, text);
    const stat = await io(path, 'read', () => lstat(path));
    if (stat.isDirectory()) stack.push({ path, rel, entries: [] });
    else if (stat.isSymbolicLink())
      top.entries.push({
        name,
        mode: '120000',
        oid: gitBlobId(await io(path, 'read', () => readlink(path, { encoding: 'buffer' }))),
      });
    else if (stat.isFile())
      top.entries.push({
        name,
        mode: stat.mode & 0o111 ? '100755' : '100644',
        oid: await blobIdOfFile(path, rel, signal),
      });
    else throw new GitUnsafeTreeError(rel, 'pipes, sockets and devices are not content');
  }
  return id;
}

/** The blob id of one file, streamed: its size from the open descriptor, then its bytes. */
async function blobIdOfFile(path: string, rel: string, signal: AbortSignal | undefined): Promise<string> {
  const handle: FileHandle = await io(path, 'open', () => open(path, constants.O_RDONLY | constants.O_NOFOLLOW));
  try {
    const { size } = await io(path, 'read', () => handle.stat());
    const hash = createHash('sha1').update(`blob ${size}\0`);
    const buffer = Buffer.allocUnsafe(Math.min(Math.max(size + 1, 1), CHUNK));
    let total = 0;
    for (;;) {
      throwIfAborted(signal, 'folderTreeId');
      const { bytesRead } = await io(path, 'read', () => handle.read(buffer, 0, buffer.length, null));
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > size) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
    if (total !== size) throw new GitIoError(rel, 'hash (it changed while being read)');
    return hash.digest('hex');
  } finally {
    await handle.close().catch(() => undefined);
  }
}

async function io<T>(path: string, operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new GitIoError(path, operation, error);
  }
}

function join(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}
