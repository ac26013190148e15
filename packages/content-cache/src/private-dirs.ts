import { randomBytes } from 'node:crypto';
import { constants, readFileSync, readlinkSync } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, readFile, rename, rm, rmdir, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Private folders: where acquisition keeps what nobody else may read (deploy keys, the
 * header file that carries a Basic credential to git, a private gitdir), under one root
 * the store owns, so that what a killed process left is found and removed.
 *
 *   <root>/                 mode 0700, owned by this account, never a link
 *   <root>/<id>.owner       who made <id>: pid, process start time, boot id, pid namespace
 *   <root>/<id>/            the private folder (0700) a provider gets
 *   <root>/.trash-<random>/ a folder on its way out: renamed there first, then shredded
 *   <root>/.tmp-<random>    an owner record being written (renamed into place whole)
 *
 * Liveness, and why not proper-lockfile's mtime staleness: a lock refreshed by a timer is
 * "stale" whenever its holder's event loop is blocked longer than the stale period (a big
 * synchronous hash, a debugger, a stopped container), and then a live preparation's
 * credentials would be removed under it. Instead the owner record names the process: its
 * pid and its start time (field 22 of /proc/<pid>/stat, in clock ticks since boot), the
 * boot id and the pid namespace. An owner is dead when the machine rebooted since (the boot
 * id differs), or, in the same pid namespace, when no process has that pid or the one that
 * has it started at another time (the pid was reused). That is exact: a live owner is never
 * judged dead, however busy, and a dead one is recognized at once. An owner in another pid
 * namespace cannot be judged from here and counts as alive: it is left to a sweeper in its
 * own namespace. Without /proc (not Linux) only the pid is checked (`kill(pid, 0)`), which
 * keeps a folder whose pid was reused until that process ends: never too early.
 */

/** Files up to this size are overwritten before they are unlinked; credentials are far smaller. */
const SHRED_LIMIT = 1024 * 1024;
/** An owner record half-written by a process that died between write and rename holds no secret; kept this long. */
const TEMP_GRACE_MS = 60_000;
const OWNER_SUFFIX = '.owner';
const TRASH_PREFIX = '.trash-';
const TEMP_PREFIX = '.tmp-';

interface OwnerRecord {
  pid: number;
  /** Start time of the process in clock ticks since boot; undefined without /proc. */
  start: string | undefined;
  boot: string | undefined;
  pidNamespace: string | undefined;
}

/** The one root, checked (a folder of ours, not a link, 0700) and made if missing. */
async function openPrivateRoot(root: string): Promise<string> {
  await mkdir(root, { recursive: true, mode: 0o700 });
  const info = await lstat(root);
  if (!info.isDirectory()) throw new Error(`private root ${root} is not a folder (a link or a file is never followed)`);
  if (typeof process.getuid === 'function' && info.uid !== process.getuid()) {
    throw new Error(`private root ${root} belongs to another account`);
  }
  if ((info.mode & 0o777) !== 0o700) await chmod(root, 0o700);
  return root;
}

/**
 * A fresh private folder under `root`, owned by this process. The owner record is put in
 * place (whole, by one rename) *before* the folder exists and removed only *after* the
 * folder is gone, so a folder without a record never belongs to a live process.
 */
export async function makePrivateDir(root: string): Promise<string> {
  await openPrivateRoot(root);
  const id = `p-${randomBytes(12).toString('hex')}`;
  const temp = join(root, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
  await writeFile(temp, `${JSON.stringify(ownRecord())}\n`, { flag: 'wx', mode: 0o600 });
  await rename(temp, join(root, `${id}${OWNER_SUFFIX}`));
  const dir = join(root, id);
  await mkdir(dir, { mode: 0o700 });
  // mkdir's mode is cut by the umask; the folder must be exactly 0700.
  await chmod(dir, 0o700);
  return dir;
}

/**
 * Removes a private folder made by makePrivateDir: out of sight by one rename, its files
 * overwritten and unlinked, then its owner record. Rejects when it cannot; the record then
 * stays, so the folder is swept once this process is gone.
 */
export async function removePrivateDir(path: string): Promise<void> {
  const root = dirname(path);
  const id = basename(path);
  if (!/^p-[0-9a-f]{24}$/.test(id)) throw new Error(`${path} is not a private folder made by makePrivateDir`);
  await retire(root, path);
  await rm(join(root, `${id}${OWNER_SUFFIX}`), { force: true });
}

/**
 * Removes every private folder under `root` whose owner is dead (see above), every
 * folder without an owner record, and whatever a remover left half-shredded. Folders of
 * live owners are never touched. Returns how many private folders were removed.
 */
export async function sweepPrivateDirs(root: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  const here = ownRecord();
  let removed = 0;
  for (const name of names) {
    const path = join(root, name);
    if (name.startsWith(TRASH_PREFIX)) {
      // Nobody reuses a trashed folder; shredding it twice at once is harmless.
      await shred(path);
    } else if (name.startsWith(TEMP_PREFIX)) {
      const info = await lstat(path).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > TEMP_GRACE_MS) await rm(path, { force: true });
    } else if (name.endsWith(OWNER_SUFFIX)) {
      const id = name.slice(0, -OWNER_SUFFIX.length);
      if (await ownerAlive(path, here)) continue;
      // Folder first, record last: the same order a live owner uses.
      if (await retire(root, join(root, id))) removed += 1;
      await rm(path, { force: true });
    } else if (/^p-[0-9a-f]{24}$/.test(name)) {
      // A folder whose record is gone is dead: the record is made before it and removed after it.
      const record = await lstat(join(root, `${name}${OWNER_SUFFIX}`)).catch(() => undefined);
      if (!record && (await retire(root, path))) removed += 1;
    }
  }
  return removed;
}

/** Renames `path` to a trash name under `root` and shreds it; false when it was already gone. */
async function retire(root: string, path: string): Promise<boolean> {
  const trash = join(root, `${TRASH_PREFIX}${randomBytes(8).toString('hex')}`);
  try {
    await rename(path, trash);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  await shred(trash);
  return true;
}

/**
 * Removes a tree, never following a link, overwriting each regular file of up to
 * SHRED_LIMIT bytes with zeros (and syncing it) before unlinking it, so a deploy key or a
 * header file does not stay readable in the freed blocks of a simple filesystem. Larger
 * files are a private gitdir's packs (content fetched from the origin, published anyway) and
 * are unlinked only. Copy-on-write and flash storage may keep old blocks whatever is
 * written: this is a best effort below the file system, the unlink is the guarantee.
 * Entries vanishing meanwhile (another sweeper) are fine.
 */
async function shred(path: string): Promise<void> {
  const info = await lstat(path).catch(() => undefined);
  if (!info) return;
  if (info.isDirectory()) {
    // Read-only folders (git makes some) must become writable to be emptied.
    await chmod(path, 0o700).catch(() => undefined);
    for (const name of await readdir(path).catch(() => [] as string[])) await shred(join(path, name));
    await rmdir(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    return;
  }
  if (info.isFile() && info.size > 0 && info.size <= SHRED_LIMIT) await overwrite(path, info.size);
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

async function overwrite(path: string, size: number): Promise<void> {
  // git writes objects read-only; this account owns them, in a folder only it can reach.
  await chmod(path, 0o600).catch(() => undefined);
  let handle;
  try {
    handle = await open(path, constants.O_WRONLY | constants.O_NOFOLLOW);
  } catch {
    return; // gone, or replaced by something that is not ours to write: unlinked anyway
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return;
    await handle.write(Buffer.alloc(Math.min(size, stat.size)), 0, Math.min(size, stat.size), 0);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Whether the owner recorded in `path` may still be running (see the comment at the top). */
async function ownerAlive(path: string, here: OwnerRecord): Promise<boolean> {
  let record: OwnerRecord;
  try {
    record = JSON.parse(await readFile(path, 'utf8')) as OwnerRecord;
    if (!Number.isInteger(record.pid) || record.pid <= 0) throw new Error('no pid');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true; // its owner just removed it
    // Records are renamed into place whole, so this is damage by hand: judged by age.
    const info = await lstat(path).catch(() => undefined);
    return info !== undefined && Date.now() - info.mtimeMs < TEMP_GRACE_MS;
  }
  if (record.boot !== undefined && here.boot !== undefined && record.boot !== here.boot) return false;
  if (record.pidNamespace !== here.pidNamespace) return true;
  if (record.start !== undefined && here.start !== undefined) return startTimeOf(record.pid) === record.start;
  try {
    process.kill(record.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

let own: OwnerRecord | undefined;

function ownRecord(): OwnerRecord {
  own ??= {
    pid: process.pid,
    start: startTimeOf(process.pid),
    boot: readText('/proc/sys/kernel/random/boot_id'),
    pidNamespace: readLink('/proc/self/ns/pid'),
  };
  return own;
}

/**
 * Field 22 of /proc/<pid>/stat (counted past the command name, which may hold spaces and
 * parentheses), or undefined when no such process runs. A zombie (state Z or X) has
 * exited: its folder is dead even before its parent reaps it.
 */
function startTimeOf(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
  return fields[19];
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function readLink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
