import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
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
import { CommandError } from '../command-error.js';
import { alignColumns, formatBytes, plural, printable, shellQuote, shortHash } from '../format.js';
import { EXIT_FAILURE, EXIT_OK, printJson } from '../io.js';
import { REMOTE_OPTIONS, openRemote } from '../registry-auth.js';
import type { Terminal } from '../terminal.js';
import { UsageError } from '../usage.js';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

const COMMON = {
  root: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const satisfies OptionsConfig;

type Subcommand = (args: string[], term: Terminal) => Promise<number>;

const SUBCOMMANDS: Record<string, Subcommand> = { put, ls, verify, gc, push, pull };

/** `agentproto cache <put|ls|verify|gc|push|pull> ...`; main has answered `--help`. */
export async function runCache(args: readonly string[], term: Terminal): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined) throw new UsageError('cache needs a subcommand: put, ls, verify, gc, push or pull');
  const run = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
  if (!run) throw new UsageError(`unknown command "cache ${name}"`);
  return run(rest, term);
}

/** Stores a local folder, keyed by its tree digest; a second put of the same tree fills nothing. */
async function put(args: string[], term: Terminal): Promise<number> {
  const options = { ...COMMON, provider: { type: 'string', default: 'local' }, name: { type: 'string' } } as const;
  const parsed = parse('cache put', args, options, true);
  const [folder, ...extra] = parsed.positionals;
  if (folder === undefined || extra.length > 0) throw new UsageError('cache put takes exactly one folder');
  const { name, provider } = parsed.values;
  if (name === '') throw new UsageError('--name must not be empty');

  const dir = await existingFolder(folder);
  // The folder is the caller's workspace here: a store root inside it would be copied into itself.
  const store = await openStore(parsed.values.root, { workspace: dir });
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
  if (parsed.values.json) {
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
async function ls(args: string[], term: Terminal): Promise<number> {
  const parsed = parse('cache ls', args, COMMON, false);
  const store = await openStore(parsed.values.root);
  const listing = await store.list();
  if (parsed.values.json) {
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
  const rows = listing.objects.map((object) => [
    shortHash(object.objectId),
    printable(object.provider),
    String(object.files),
    formatBytes(object.bytes),
    String(listing.links.filter((link) => link.objectId === object.objectId).length),
    shortHash(object.digest),
    shortHash(object.contentId),
  ]);
  const [headerLine, ...lines] = alignColumns([header, ...rows]);
  const out = [headerLine];
  listing.objects.forEach((object, i) => {
    out.push(lines[i]!);
    for (const { key } of listing.keys.filter((k) => k.objectId === object.objectId)) {
      out.push(`  key: ${describeKey(key)}`);
    }
  });
  return `${out.join('\n')}\n${summary}`;
}

/** Re-hashes every object; exit 1 when any is corrupt, so a script can act on it. */
async function verify(args: string[], term: Terminal): Promise<number> {
  const parsed = parse('cache verify', args, { ...COMMON, quarantine: { type: 'boolean', default: false } }, false);
  const store = await openStore(parsed.values.root);
  term.status(`verifying the objects of ${shellQuote(store.root)}`);
  const report = await store.verify({ quarantine: parsed.values.quarantine });
  const status = report.corrupt.length === 0 ? EXIT_OK : EXIT_FAILURE;
  if (parsed.values.json) {
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
  if (report.corrupt.length > 0 && !parsed.values.quarantine) {
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
async function gc(args: string[], term: Terminal): Promise<number> {
  const parsed = parse('cache gc', args, COMMON, false);
  const store = await openStore(parsed.values.root);
  const report = await store.gc();
  if (parsed.values.json) {
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

const REMOTE = {
  ...COMMON,
  ...REMOTE_OPTIONS,
} as const satisfies OptionsConfig;

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
async function push(args: string[], term: Terminal): Promise<number> {
  const parsed = parse('cache push', args, REMOTE, false);
  const remote = openRemote('cache push', parsed.values);
  const store = await openStore(parsed.values.root, { remote });
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
  if (parsed.values.json) printJson(term, report);
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
async function pull(args: string[], term: Terminal): Promise<number> {
  const parsed = parse('cache pull', args, REMOTE, false);
  const remote = openRemote('cache pull', parsed.values);
  // A remote failure during acquire is an event (the store then tries the fill): kept here by
  // object, to report the registry's reason rather than the fill's refusal.
  const reasons = new Map<string, { code: string; message: string }>();
  const store = await openStore(parsed.values.root, {
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
  if (parsed.values.json) printJson(term, report);
  else {
    const lines = [
      ...pulled.map(
        ({ key, objectId, files, bytes }) =>
          `pulled ${shortHash(objectId)}  ${describeKey(key)}  ${files} files (${formatBytes(bytes)})`,
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

/** parseArgs with its errors turned into usage errors that name the command. */
function parse<O extends OptionsConfig, P extends boolean>(
  command: string,
  args: string[],
  options: O,
  allowPositionals: P,
) {
  try {
    return parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: P }>({
      args,
      options,
      strict: true,
      allowPositionals,
    });
  } catch (error) {
    throw new UsageError(`${command}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A relative --root is taken from the working directory; the library itself only accepts absolute roots. */
function openStore(
  root: string | undefined,
  options: Pick<ContentStoreOptions, 'workspace' | 'remote' | 'onEvent'> = {},
): Promise<ContentStore> {
  if (root === '') throw new UsageError('--root must not be empty');
  return openContentStore({ root: root === undefined ? defaultCacheRoot() : resolve(root), ...options });
}

/** The real path of a folder, so one folder reached by two paths is one declaration. */
async function existingFolder(path: string): Promise<string> {
  const absolute = resolve(path);
  const info = await stat(absolute).catch(() => undefined);
  if (!info?.isDirectory()) throw new CommandError(`cache put: ${shellQuote(absolute)} is not a folder`);
  return realpath(absolute);
}
