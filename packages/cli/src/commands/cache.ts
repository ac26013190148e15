import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { copyInside } from '@agentproto/fs-inside';
import {
  type CacheKey,
  type ContentStore,
  type ContentStoreOptions,
  type StoreListing,
  defaultCacheRoot,
  hashTree,
  openContentStore,
} from '@agentproto/content-cache';
import { type SkillContentProvider, gitProvider, localProvider } from '@agentproto/skill-providers';
import { alignColumns, formatBytes, plural, printable, shellQuote, shortHash } from '../format.js';
import { EXIT_FAILURE, EXIT_OK, printJson } from '../io.js';
import { openRemote, remoteFlags } from '../registry-auth.js';
import type { Terminal } from '../terminal.js';
import { type Invocation, flagOption, textOption } from '../table.js';

type Subcommand = (invocation: Invocation, term: Terminal) => Promise<number>;

const SUBCOMMANDS: Readonly<Record<string, Subcommand>> = { put, ls, verify, gc, push, pull };

/** `agentproto cache <put|ls|verify|gc|push|pull> ...`, as the command table read it. */
export function runCache(invocation: Invocation, term: Terminal): Promise<number> {
  return SUBCOMMANDS[invocation.sub]!(invocation, term);
}

/** Stores a local folder, keyed by its tree digest; a second put of the same tree fills nothing. */
async function put(invocation: Invocation, term: Terminal): Promise<number> {
  const name = textOption(invocation, 'name');
  const provider = textOption(invocation, 'provider') ?? 'local';
  // The real path, so one folder reached by two paths is one declaration; the table checked it is a folder.
  const dir = await realpath(resolve(invocation.positionals[0]!));
  // The folder is the caller's workspace here: a store root inside it would be copied into itself.
  const store = await openStore(invocation, { workspace: dir });
  // A folder that is a git checkout is stored without its `.git` (any spelling git refuses):
  // a store never holds one, and the local skill provider hashes and copies the same way,
  // so a put and a local skill of the same folder name the same content.
  const { digest } = await hashTree(dir, undefined, { within: dir, skipDotGit: true });
  const key: CacheKey = {
    provider,
    declaration: name === undefined ? { path: dir } : { name },
    version: digest,
    contentId: digest,
  };
  // The fill copies links as links; the store then refuses any that is absolute or leaves
  // the tree. Files are read only through descriptors proven inside the folder (copyInside),
  // so a folder swapped for a link meanwhile never copies an outside file. If the folder
  // changes between the hash above and this copy, the object's marker still records exactly
  // what was stored, and `cache verify` checks against it.
  const tree = await store.acquire(key, (destination) => copyInside(dir, '', destination, { skipDotGit: true }));
  if (json(invocation)) {
    printJson(term, tree);
    return EXIT_OK;
  }
  const rows = [
    ['objectId', tree.objectId],
    ['path', shellQuote(tree.path)],
    ['linkPath', shellQuote(tree.linkPath)],
    ['digest', tree.digest],
    ['files', `${tree.files} (${formatBytes(tree.bytes)})`],
    ['fromCache', String(tree.fromCache)],
  ];
  term.stdout.write(`${alignColumns(rows).join('\n')}\n`);
  return EXIT_OK;
}

/** Lists every object with the keys that reach it, and how many declaration links point at it. */
async function ls(invocation: Invocation, term: Terminal): Promise<number> {
  const store = await openStore(invocation);
  const listing = await store.list();
  if (json(invocation)) {
    printJson(term, listing);
    return EXIT_OK;
  }
  term.stdout.write(formatListing(store.root, listing));
  return EXIT_OK;
}

function formatListing(root: string, listing: StoreListing): string {
  const summary = `${plural(listing.objects.length, 'object')}, ${plural(listing.keys.length, 'key')}, ${plural(listing.links.length, 'link')} in ${shellQuote(root)}\n`;
  if (listing.objects.length === 0) return summary;
  const header = ['OBJECT', 'PROVIDER', 'FILES', 'SIZE', 'LINKS', 'DIGEST', 'CONTENT ID'];
  // Grouped once by object: filtering every key per object was quadratic (100,000 objects
  // by 1,000,000 keys).
  const linkCount = new Map<string, number>();
  for (const link of listing.links)
    if (link.objectId) linkCount.set(link.objectId, (linkCount.get(link.objectId) ?? 0) + 1);
  const keysOf = new Map<string, StoreListing['keys']>();
  for (const entry of listing.keys) {
    const list = keysOf.get(entry.objectId);
    if (list) list.push(entry);
    else keysOf.set(entry.objectId, [entry]);
  }
  const rows = listing.objects.map((object) => [
    shortHash(object.objectId),
    printable(object.provider),
    String(object.files),
    formatBytes(object.bytes),
    String(linkCount.get(object.objectId) ?? 0),
    shortHash(object.digest),
    shortHash(object.contentId),
  ]);
  const [headerLine, ...lines] = alignColumns([header, ...rows]);
  const out = [headerLine];
  listing.objects.forEach((object, i) => {
    out.push(lines[i]!);
    for (const { key } of keysOf.get(object.objectId) ?? []) {
      out.push(`  key: ${describeKey(key)}`);
    }
  });
  return `${out.join('\n')}\n${summary}`;
}

/** Re-hashes every object; exit 1 when any is corrupt, so a script can act on it. */
async function verify(invocation: Invocation, term: Terminal): Promise<number> {
  const quarantine = flagOption(invocation, 'quarantine');
  const store = await openStore(invocation);
  term.status(`verifying the objects of ${shellQuote(store.root)}`);
  const report = await store.verify({ quarantine });
  const status = report.corrupt.length === 0 ? EXIT_OK : EXIT_FAILURE;
  if (json(invocation)) {
    printJson(term, report);
    return status;
  }
  const lines = [
    `checked ${plural(report.checked, 'object')}: ${report.ok.length} ok, ${report.corrupt.length} corrupt`,
  ];
  for (const entry of report.corrupt) {
    lines.push(`corrupt ${entry.objectId}: ${printable(entry.reason)}`);
    if (entry.quarantinedTo !== undefined) lines.push(`  quarantined to ${shellQuote(entry.quarantinedTo)}`);
  }
  if (report.corrupt.length > 0 && !quarantine) {
    lines.push('run `agentproto cache verify --quarantine` to set them aside; the next acquisition fetches them again');
  }
  term.stdout.write(`${lines.join('\n')}\n`);
  return status;
}

/**
 * Removes what nothing reaches, and the leftovers of writers that died: staging folders,
 * and the private folders (deploy keys, credential files) of preparations that were killed,
 * securely removed; a live preparation's are never touched.
 */
async function gc(invocation: Invocation, term: Terminal): Promise<number> {
  const store = await openStore(invocation);
  const report = await store.gc();
  if (json(invocation)) {
    printJson(term, report);
    return EXIT_OK;
  }
  const lines = [
    `removed ${plural(report.removedObjects.length, 'object')} (${formatBytes(report.freedBytes)}), ` +
      `${plural(report.removedKeys, 'key')}, ${plural(report.removedLinks, 'link')}, ` +
      `${plural(report.removedStaging, 'staging folder')}, ${plural(report.removedPrivate, 'private folder')} of dead preparations`,
    ...report.removedObjects.map((id) => `removed ${id}`),
  ];
  term.stdout.write(`${lines.join('\n')}\n`);
  return EXIT_OK;
}

/** One key in a push or pull report. */
interface KeyOutcome {
  key: CacheKey;
  objectId: string;
}

interface KeyFailure extends KeyOutcome {
  /** The stable code of what failed (REGISTRY_*, CACHE_*), or REMOTE_FAILED. */
  code: string;
  message: string;
}

/**
 * `cache push --remote URL --repository NAME`: every key of the local store goes to the
 * registry, one after the other, each awaited; a key that fails is reported and the rest
 * still go. Exit 1 when any failed.
 */
async function push(invocation: Invocation, term: Terminal): Promise<number> {
  const remote = await openRemote('cache push', remoteFlags(invocation));
  const store = await openStore(invocation, { remote });
  const pushed: KeyOutcome[] = [];
  const failed: KeyFailure[] = [];
  const { keys } = await store.list();
  for (const [i, { key, objectId }] of keys.entries()) {
    term.status(`pushing key ${i + 1} of ${keys.length}: ${shortHash(objectId)}`);
    try {
      // False only when the key vanished since it was listed (a gc in between): nothing to push.
      if (await store.push(key)) pushed.push({ key, objectId });
    } catch (error) {
      failed.push({ key, objectId, ...failureOf(error) });
    }
  }
  const report = { remote: remote.label, pushed, failed };
  if (json(invocation)) printJson(term, report);
  else {
    const lines = [
      ...pushed.map(({ key, objectId }) => `pushed ${shortHash(objectId)}  ${describeKey(key)}`),
      ...failed.map(
        ({ key, objectId, code, message }) =>
          `failed ${shortHash(objectId)}  ${describeKey(key)}: ${code}: ${printable(message)}`,
      ),
      `pushed ${plural(pushed.length, 'key')} to ${remote.label}${failed.length > 0 ? `, ${failed.length} failed` : ''}`,
    ];
    term.stdout.write(`${lines.join('\n')}\n`);
  }
  return failed.length > 0 ? EXIT_FAILURE : EXIT_OK;
}

/**
 * `cache pull --remote URL --repository NAME`: every key the registry lists is acquired into
 * the local store from the registry alone. The fill given to acquire only throws, so nothing
 * but the remote's content (checked against its digests and the tree digest of its marker)
 * can be stored, and only once the key's provider proved the tree to be the content its
 * content id names (git: the files hash to the tree id; local: the tree digest). Every
 * machine with push rights writes that registry, so a key whose provider cannot prove its
 * tree (CACHE_REMOTE_UNVERIFIABLE) is refused. Keys already here are reported as present.
 * Exit 1 when any failed.
 */
async function pull(invocation: Invocation, term: Terminal): Promise<number> {
  const remote = await openRemote('cache pull', remoteFlags(invocation));
  // A remote failure during acquire is an event (the store then tries the fill): kept here by
  // object, to report the registry's reason rather than the fill's refusal.
  const reasons = new Map<string, { code: string; message: string }>();
  const store = await openStore(invocation, {
    remote,
    onEvent: (event) => {
      if (event.type === 'remote-warning') reasons.set(event.subject, { code: event.code, message: event.message });
      if (event.type === 'remote-miss')
        reasons.set(event.objectId, {
          code: 'REMOTE_MISSING',
          message: `${event.remote} lists the key but holds no object for it`,
        });
    },
  });
  const listed = await remote.listKeys();
  const pulled: (KeyOutcome & { digest: string; files: number; bytes: number })[] = [];
  const present: KeyOutcome[] = [];
  const failed: KeyFailure[] = [];
  for (const [i, { key, marker }] of listed.entries()) {
    term.status(`pulling key ${i + 1} of ${listed.length}: ${shortHash(marker.objectId)}`);
    const prover = PROVERS.get(key.provider);
    if (!prover?.verifyTree) {
      failed.push({
        key,
        objectId: marker.objectId,
        code: 'CACHE_REMOTE_UNVERIFIABLE',
        message: `provider ${key.provider} cannot prove a tree from the registry to be its content`,
      });
      continue;
    }
    try {
      const resolved = { version: key.version, contentId: key.contentId };
      const tree = await store.acquire(
        key,
        async () => {
          throw new Error('not in the remote');
        },
        { verify: (path, signal) => prover.verifyTree!(path, resolved, signal) },
      );
      if (tree.source === 'remote')
        pulled.push({ key, objectId: tree.objectId, digest: tree.digest, files: tree.files, bytes: tree.bytes });
      else present.push({ key, objectId: tree.objectId });
    } catch (error) {
      failed.push({ key, objectId: marker.objectId, ...(reasons.get(marker.objectId) ?? failureOf(error)) });
    }
  }
  await store.remoteIdle();
  const report = { remote: remote.label, root: store.root, pulled, present, failed };
  if (json(invocation)) printJson(term, report);
  else {
    const lines = [
      ...pulled.map(
        ({ key, objectId, files, bytes }) =>
          `pulled ${shortHash(objectId)}  ${describeKey(key)}  ${plural(files, 'file')} (${formatBytes(bytes)})`,
      ),
      ...present.map(({ key, objectId }) => `present ${shortHash(objectId)}  ${describeKey(key)}`),
      ...failed.map(
        ({ key, objectId, code, message }) =>
          `failed ${shortHash(objectId)}  ${describeKey(key)}: ${code}: ${printable(message)}`,
      ),
      `pulled ${plural(pulled.length, 'key')} from ${remote.label} into ${shellQuote(store.root)}, ${present.length} already present${failed.length > 0 ? `, ${failed.length} failed` : ''}`,
    ];
    term.stdout.write(`${lines.join('\n')}\n`);
  }
  return failed.length > 0 ? EXIT_FAILURE : EXIT_OK;
}

/** The providers whose trees `cache pull` can prove from the tree alone. */
const PROVERS = new Map<string, SkillContentProvider>([
  ['git', gitProvider()],
  ['local', localProvider()],
]);

function failureOf(error: unknown): { code: string; message: string } {
  const code = (error as { code?: unknown } | undefined)?.code;
  return {
    code: typeof code === 'string' ? code : 'REMOTE_FAILED',
    message: error instanceof Error ? error.message : String(error),
  };
}

/** A key on one line; the declaration as JSON, every name in it escaped as printable. */
function describeKey(key: CacheKey): string {
  return printable(
    `provider=${key.provider} version=${shortHash(key.version)} declaration=${JSON.stringify(key.declaration)}`,
  );
}

/** A relative --store is taken from the working directory; the library itself only accepts absolute roots. */
function openStore(
  invocation: Invocation,
  options: Pick<ContentStoreOptions, 'workspace' | 'remote' | 'onEvent'> = {},
): Promise<ContentStore> {
  const root = textOption(invocation, 'store');
  return openContentStore({ root: root === undefined ? defaultCacheRoot() : resolve(root), ...options });
}

function json(invocation: Invocation): boolean {
  return flagOption(invocation, 'json');
}
