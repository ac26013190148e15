// The package reader over a folder: node:fs, its open flags, and the kernel's word on where a
// descriptor is. Everything else of reading a package is in reader.ts and resolve.ts, which
// import nothing of Node.
import { closeSync, constants, fstatSync, openSync, readSync, readdirSync } from 'node:fs';
import * as nodeFs from 'node:fs/promises';
import { resolve as absolutePath } from 'node:path';
import { descriptorIsInside, descriptorPath } from '@agentproto/fs-inside';
import { type PluginReader, type PluginReaderOptions, type ReaderPlatform, createPluginReader } from './reader.js';
import { type PackageFileHandle, type PackageFs, type ResolveResult, resolveEntry } from './resolve.js';

export const nodePackageFs: PackageFs = {
  realpath: (path) => nodeFs.realpath(path),
  lstat: (path) => nodeFs.lstat(path),
  readlink: (path) => nodeFs.readlink(path),
  readdir: (path, options) => nodeFs.readdir(path, options),
  open: (path, flags) => nodeFs.open(path, flags),
};

// O_NONBLOCK: a file swapped for a pipe after it was checked must not block the open.
// O_NOFOLLOW: nor may a file swapped for a link be followed.
const FILE_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const DIRECTORY_FLAGS = FILE_FLAGS | (constants.O_DIRECTORY ?? 0);

/**
 * Resolves `relPath` against the plugin root as the operating system would, but one
 * component at a time: each component is lstat-ed, a link is read and its target spliced
 * into the remaining components, so every intermediate location is judged before anything
 * below it is touched (a realpath of the whole path would already have followed a link out
 * of the root, and could not say which component failed). Containment is judged against
 * the root's own real path (§4.1: "the filesystem-resolved path MUST remain within the
 * filesystem-resolved plugin root"), so a root reached through a link is fine.
 *
 * A link with an absolute target is followed when the target names a place inside the
 * root, spelled from the root's real path or from the root path as given: §4.1 judges where
 * a link resolves, not how it is written ("Symlinks ... MAY resolve to targets within the
 * plugin root"). Such a package stops working when it is moved; that is a packaging
 * concern, not a reason for a client to refuse it. Any other absolute target is outside.
 */
export async function resolveInside(
  root: string,
  relPath: string,
  fs: PackageFs = nodePackageFs,
): Promise<ResolveResult> {
  const resolved = await resolveEntry(absolutePath(root), relPath, fs);
  return resolved.ok ? { ok: true, realPath: resolved.realPath } : resolved;
}

/**
 * A reader for the plugin directory at `root` (see createPluginReader). With node:fs itself
 * (no `options.fs`), entries a listing found are opened, measured, read and listed with
 * synchronous calls: each is a few system calls on a name just listed, cheaper than a round
 * trip to the thread pool per call. A host's own fs is awaited.
 */
export function openPluginReader(root: string, options: PluginReaderOptions = {}): PluginReader {
  const own = options.fs === undefined;
  const platform: ReaderPlatform = {
    fs: options.fs ?? nodePackageFs,
    fileFlags: FILE_FLAGS,
    directoryFlags: DIRECTORY_FLAGS,
    absoluteTargets: 'root',
    descriptorIsInside,
    descriptorPath,
    ...(own
      ? {
          openNow: (realPath: string, flags: number) => syncHandle(openSync(realPath, flags)),
          readdirNow: (path: string) => readdirSync(path, { withFileTypes: true }),
        }
      : {}),
  };
  return createPluginReader(absolutePath(root), options, platform);
}

/** A node:fs descriptor behind the handle interface, every call synchronous. */
function syncHandle(fd: number): PackageFileHandle {
  return {
    fd,
    stat: async () => fstatSync(fd),
    read: async (buffer, offset, length, position) => ({ bytesRead: readSync(fd, buffer, offset, length, position) }),
    close: async () => closeSync(fd),
  };
}
