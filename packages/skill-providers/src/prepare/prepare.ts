import { type CacheKey, FillFailedError, type ContentStore } from '@agentproto/content-cache';
import type { FetchLimits } from '@agentproto/git';
import pLimit from 'p-limit';
import {
  type CanonicalDeclaration,
  canonicalDeclaration,
  parseSkillDeclaration,
  type SkillDeclaration,
} from '../entries/index.js';
import {
  CredentialCleanupError,
  type EntryRef,
  type Phase,
  ProviderResultInvalidError,
  SkillAbortedError,
  SkillFileMissingError,
} from '../errors.js';
import type {
  BasicVault,
  ProviderContext,
  ResolvedSkillSource,
  SecretReader,
  SkillContentProvider,
  SkillSource,
} from '../provider.js';
import { defaultRegistry } from '../defaults.js';
import type { ProviderRegistry } from '../registry.js';
import { localSandbox } from '../sandbox/local.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { preparationError } from './errors.js';
import { type LockedSkill, type SkillLock, assertLocked, lockedSkill, parseSkillLock, pinToLock } from './lock.js';
import { skillFileState } from './skill-file.js';

/** How `prepareSkills`, `resolveSkills` and `lockSkills` run. Only `cache` is required. */
export interface PrepareOptions {
  /**
   * The content store skills are published into (and looked up in); it lives outside any
   * workspace. `openContentStore({ root: defaultCacheRoot() })` of `@agentproto/content-cache`.
   */
  cache: ContentStore;
  /**
   * The providers a declaration may name; `defaultRegistry()` (git) by default. An entry
   * naming another fails with `SKILL_PROVIDER_UNKNOWN` before anything runs.
   */
  registry?: ProviderRegistry;
  /**
   * Where acquisition runs (git, ssh, private folders for credentials);
   * `localSandbox({ privateRoot: cache.privateRoot })`, this machine, by default.
   */
  sandbox?: Sandbox;
  /**
   * Named secrets (SSH deploy keys), read only for names the deployment approved; by
   * default the environment variable of that name. A name without a value: `SKILL_SECRET_MISSING`.
   */
  secrets?: SecretReader;
  /**
   * HTTP Basic credentials by repository URL (`(url) => ({ username, password })`), asked
   * on every preparation; none by default. They never appear in a URL, an argument, an error or the store.
   */
  vault?: BasicVault;
  /** Cancels the call: every entry stops, nothing more is published, the call rejects with `SKILL_ABORTED`. */
  signal?: AbortSignal;
  /** Entries prepared at once; 4 by default. Entries with the same content declaration run once. */
  concurrency?: number;
  /**
   * Caps on what one entry may fetch, for this call: `maxFiles` (entries), `maxBytes`,
   * `maxDepth`. They win over a provider's own (`gitProvider({ limits })`), which win over
   * the defaults (10,000 entries, 256 MiB, depth 32). Past one: SKILL_TOO_LARGE.
   */
  limits?: FetchLimits;
  /**
   * A lock (from `lockSkills`, or a skills.lock.json read with `parseSkillLockText`): prepare
   * or resolve exactly the versions it records. Every entry is still resolved against its
   * origin with the current credential; an entry the lock does not hold, a record no entry
   * matches, or an origin that now gives another content id for the locked version fails
   * with `SKILL_LOCK_DRIFT` (SkillLockDriftError) naming the entry, before anything of it is
   * fetched. Checked against the lock schema first (`SKILL_LOCK_INVALID`). Ignored by `lockSkills`.
   */
  locked?: SkillLock;
  /** Called as entries are resolved, fetched or found in the store: for progress output. Must not throw. */
  onProgress?: (event: PrepareProgress) => void;
}

export type PrepareProgress =
  | { type: 'resolved'; index: number; name: string; version: string; contentId: string }
  | { type: 'fetch-start'; index: number; name: string; version: string }
  | { type: 'fetch-done'; index: number; name: string; version: string; files: number; bytes: number }
  | { type: 'hit'; index: number; name: string; version: string };

/** One prepared skill, in declaration order. */
export interface PreparedSkill {
  /** The installed name. */
  name: string;
  /** The declaration's directory: what a conversation uses. A link into the store; read only. */
  dir: string;
  /** The resolved version: for git the commit id. */
  version: string;
  /** The content's id: for git the tree id of the skill's directory. */
  contentId: string;
  /** True when no fetch from the origin was needed (the content was in the store, or its remote tier). */
  hit: boolean;
  /** Where the content came from for this preparation: the local store, the store's remote tier, or the origin. */
  from: 'store' | 'remote' | 'origin';
  /** The provider's id. */
  provider: string;
}

/** One resolved skill, in declaration order. */
export interface ResolvedSkill {
  /** The installed name. */
  name: string;
  /** The provider's id. */
  provider: string;
  /** The resolved version: for git the commit id. */
  version: string;
  /** The content's id: for git the tree id of the skill's directory. */
  contentId: string;
  /** Whether the store already holds it (a preparation now would not fetch). */
  cached: boolean;
  /** The hosts acquiring it connects to (the provider's `egressHosts`). */
  egressHosts: string[];
}

/** The environment variable of the secret's name: the default named-secret mechanism. */
export const environmentSecrets: SecretReader = (name) => process.env[name];

const NO_VAULT: BasicVault = () => undefined;

/**
 * Prepares every skill of a declaration: each entry is validated first (nothing runs if
 * one is bad), then resolved (always, cache hits included: resolution is where the
 * current credential is checked), looked up in the store, fetched on a miss into a
 * staging folder, checked (SKILL.md, links, modes), published, and its declaration link
 * pointed at the tree. Entries with the same content declaration are prepared once. The
 * first failure cancels the others and is thrown once all have settled.
 *
 * The declaration is checked at run time against schemas/skills/1/skills.schema.json and
 * the entry parser whatever its static type: a host may pass JSON from a stranger.
 *
 * @example
 * const cache = await openContentStore({ root: defaultCacheRoot() });
 * const skills = await prepareSkills(['https://github.com/acme/skills.git@v1.4.0#skills/review'], {
 *   cache,
 *   vault: (url) => myVault.basic(url),
 * });
 * // [{ name: 'review', dir: '/…/links/…', version: '<commit>', contentId: '<tree id>', hit: false, from: 'origin', provider: 'git' }]
 * await linkSkills(skills, '.claude/skills');
 *
 * @throws {SkillEntryError} the declaration or an entry is malformed: `SKILL_DECLARATION_INVALID`,
 * `SKILL_ENTRY_INVALID`, `SKILL_REPOSITORY_INVALID`, `SKILL_URL_HAS_CREDENTIALS`, `SKILL_REF_INVALID`,
 * `SKILL_PATH_UNSAFE`, `SKILL_NAME_INVALID`, `SKILL_NAME_DUPLICATE`; nothing ran.
 * @throws {UnknownProviderError} `SKILL_PROVIDER_UNKNOWN`: an entry names a provider the registry lacks.
 * @throws {SkillLockInvalidError} `SKILL_LOCK_INVALID`: `locked` breaks the lock schema.
 * @throws {SkillLockDriftError} `SKILL_LOCK_DRIFT`: with `locked`, the declaration or the origin is not what the lock says.
 * @throws {SkillPreparationError} naming the entry and phase: `SKILL_CONFIG_INVALID`,
 * `SKILL_CREDENTIAL_NOT_APPROVED`, `SKILL_SECRET_MISSING`, `SKILL_TRANSPORT_UNSUPPORTED`, `SKILL_AUTH_FAILED`,
 * `SKILL_NOT_FOUND`, `SKILL_REF_AMBIGUOUS`, `SKILL_TOO_LARGE`, `SKILL_UNSAFE_TREE`, `SKILL_MD_MISSING`,
 * `SKILL_CONTENT_MISMATCH`, `SKILL_PROVIDER_RESULT_INVALID`, `SKILL_RESOLVE_FAILED`, `SKILL_FETCH_FAILED`,
 * `SKILL_PUBLISH_FAILED`, or a host provider's own code.
 * @throws {SkillAbortedError} `SKILL_ABORTED`: `signal` fired; nothing of the cancelled entries was published.
 * @throws {CredentialCleanupError} `SKILL_CLEANUP_FAILED`: a private folder that held credentials could not be removed.
 */
export async function prepareSkills(
  declaration: readonly SkillDeclaration[],
  options: PrepareOptions,
): Promise<PreparedSkill[]> {
  return runAll(declaration, options, async (job, context) => {
    const key = cacheKeyOf(job, job.resolved);
    let fetched = false;
    const tree = await options.cache
      .acquire(
        key,
        async (destination, fill) => {
          fetched = true;
          const version = job.resolved.version;
          job.notify({ type: 'fetch-start', version });
          await job.provider.fetch(job.source, job.resolved, { ...context, destination, signal: fill.signal });
        },
        {
          signal: context.signal,
          // Checked before publication, whether the tree came from the origin or the store's
          // remote tier: a tree without SKILL.md must never become visible.
          check: async (destination) => {
            const state = await skillFileState(destination);
            if (state !== 'ok') throw new SkillFileMissingError(job.entry, job.source.path, state);
          },
          // The store's remote tier is used only for what the provider can prove from the tree
          // itself (git: the files hash to the tree id the origin gave in resolve).
          ...(job.provider.verifyTree
            ? { verify: (tree: string, signal: AbortSignal) => job.provider.verifyTree!(tree, job.resolved, signal) }
            : {}),
        },
      )
      .catch((error: unknown) => {
        throw error instanceof FillFailedError
          ? new PhaseError('fetch', error.cause)
          : new PhaseError('publish', error);
      });
    if (fetched)
      job.notify({ type: 'fetch-done', version: job.resolved.version, files: tree.files, bytes: tree.bytes });
    else job.notify({ type: 'hit', version: job.resolved.version });
    return {
      name: job.source.name,
      dir: tree.linkPath,
      version: job.resolved.version,
      contentId: job.resolved.contentId,
      hit: !fetched,
      from: tree.source,
      provider: job.source.provider,
    };
  });
}

/**
 * Validates and resolves every entry (authorizing each, as preparation does: the origin
 * is asked with the current credential) and says which are already in the store, without
 * fetching anything. With `locked`, resolves the locked versions and fails on drift.
 *
 * @example
 * const [review] = await resolveSkills(['https://github.com/acme/skills.git@main#skills/review'], { cache });
 * // { name: 'review', provider: 'git', version: '<commit>', contentId: '<tree id>', cached: true, egressHosts: ['github.com'] }
 *
 * @throws the codes of `prepareSkills` but those of fetching and publishing (`SKILL_FETCH_FAILED`,
 * `SKILL_PUBLISH_FAILED`, `SKILL_MD_MISSING`, `SKILL_CONTENT_MISMATCH`).
 */
export async function resolveSkills(
  declaration: readonly SkillDeclaration[],
  options: PrepareOptions,
): Promise<ResolvedSkill[]> {
  return runAll(declaration, options, async (job) => {
    const key = cacheKeyOf(job, job.resolved);
    const found = await options.cache.lookup(key);
    return {
      name: job.source.name,
      provider: job.source.provider,
      ...job.resolved,
      cached: found !== undefined,
      egressHosts: job.provider.egressHosts(job.source),
    };
  });
}

/**
 * Resolves every entry (authorizing each, as `resolveSkills` does; nothing is fetched) and
 * returns the lock document: each entry's canonical declaration, name, provider, resolved
 * version (git: the commit) and content id (git: the directory's tree id), in declaration
 * order. Give it back as `prepareSkills(declaration, { ...options, locked })` to prepare
 * exactly those versions. Write it as JSON (skills.lock.json; schema:
 * schemas/skills/1/skills-lock.schema.json); it holds no credential.
 *
 * @example
 * const lock = await lockSkills(declaration, { cache });
 * await writeFile('skills.lock.json', `${JSON.stringify(lock, null, 2)}\n`);
 * // later, anywhere:
 * const locked = parseSkillLockText(await readFile('skills.lock.json'), { source: 'skills.lock.json' });
 * const skills = await prepareSkills(declaration, { cache, locked });
 *
 * @throws the codes of `resolveSkills` (`options.locked` is ignored): a malformed declaration
 * (`SKILL_DECLARATION_INVALID`, `SKILL_ENTRY_INVALID`, `SKILL_NAME_DUPLICATE`, …), an unknown provider
 * (`SKILL_PROVIDER_UNKNOWN`), and an entry that does not resolve or authorize (`SKILL_AUTH_FAILED`,
 * `SKILL_NOT_FOUND`, `SKILL_REF_AMBIGUOUS`, `SKILL_RESOLVE_FAILED`, …), naming the entry.
 */
export async function lockSkills(
  declaration: readonly SkillDeclaration[],
  options: PrepareOptions,
): Promise<SkillLock> {
  const { locked: _ignored, ...rest } = options;
  const skills = await runAll(declaration, rest, async (job) => lockedSkill(job.source, job.resolved));
  return { lockfileVersion: 1, skills };
}

/** One entry of the declaration, read and checked once: what every step of its preparation uses. */
interface Entry {
  source: SkillSource;
  entry: EntryRef;
  provider: SkillContentProvider;
  /** What identifies its content: the store key's declaration, and what groups identical entries. */
  declaration: CanonicalDeclaration;
  /** With `locked`: the entry's lock record; `source` is then pinned to its version. */
  lock?: LockedSkill;
}

interface Job extends Entry {
  resolved: ResolvedSkillSource;
  notify(
    event:
      | { type: 'fetch-start'; version: string }
      | { type: 'fetch-done'; version: string; files: number; bytes: number }
      | { type: 'hit'; version: string },
  ): void;
}

/**
 * Carries the phase an error happened in (its cause) up to where the entry is known; never
 * leaves runOne, which unwraps it.
 */
class PhaseError extends Error {
  constructor(
    readonly phase: Phase,
    cause: unknown,
  ) {
    super(`${phase} failed`, { cause });
    this.name = 'PhaseError';
  }
}

async function runAll<T>(
  declaration: readonly SkillDeclaration[],
  options: PrepareOptions,
  finish: (job: Job, context: ProviderContext) => Promise<T>,
): Promise<T[]> {
  const registry = options.registry ?? defaultRegistry();
  // Private folders under the store's own root, where a killed preparation's are found again.
  const sandbox = options.sandbox ?? localSandbox({ privateRoot: options.cache.privateRoot });
  const sources = parseSkillDeclaration(declaration);
  // With a lock, every entry must have its record (and every record its entry) before anything runs.
  const pinned = options.locked ? pinToLock(sources, parseSkillLock(options.locked)) : undefined;
  const entries = checkedEntries(pinned ? pinned.map(({ source }) => source) : sources, registry, pinned);
  const groups = groupByContent(entries);

  // What preparations killed before their cleanup left behind (deploy keys, header files)
  // goes first; the sandbox removes only folders whose owner process is gone.
  await sandbox.sweepPrivateDirs?.();

  return runGroups(entries, groups, options, sandbox, finish);
}

/**
 * Each entry with its provider, validated, and its content declaration. Every entry is
 * checked before any of them runs: a bad entry stops the whole declaration before a secret
 * is read or a byte is fetched.
 */
function checkedEntries(
  sources: SkillSource[],
  registry: ProviderRegistry,
  pinned: readonly { record: LockedSkill }[] | undefined,
): Entry[] {
  return sources.map((source, index) => {
    const entry: EntryRef = { index, name: source.name, provider: source.provider };
    const provider = registry.get(source.provider, entry);
    try {
      provider.validate(source);
    } catch (error) {
      throw preparationError(error, entry, 'validate', new AbortController().signal);
    }
    const lock = pinned?.[index]?.record;
    return { source, entry, provider, declaration: canonicalDeclaration(source), ...(lock ? { lock } : {}) };
  });
}

/** One run per distinct content declaration (indexes of its entries); entries that differ only by name share it. */
function groupByContent(entries: readonly Entry[]): number[][] {
  const groups = new Map<string, number[]>();
  entries.forEach(({ source, declaration }, index) => {
    const id = JSON.stringify([source.provider, declaration]);
    groups.set(id, [...(groups.get(id) ?? []), index]);
  });
  return [...groups.values()];
}

/**
 * Runs the groups, at most `concurrency` at once, each once for all its entries. The first
 * failure cancels the others and is thrown once all have settled.
 */
async function runGroups<T>(
  entries: readonly Entry[],
  groups: readonly number[][],
  options: PrepareOptions,
  sandbox: Sandbox,
  finish: (job: Job, context: ProviderContext) => Promise<T>,
): Promise<T[]> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const limit = pLimit(Math.max(1, options.concurrency ?? 4));
  const results: T[] = new Array(entries.length);
  let firstError: unknown;
  try {
    await Promise.allSettled(
      groups.map((indexes) =>
        limit(async () => {
          const first = entries[indexes[0]!]!;
          try {
            const outcome = await runOne(first, options, sandbox, controller.signal, finish);
            for (const index of indexes) results[index] = { ...outcome, name: entries[index]!.source.name } as T;
          } catch (error) {
            firstError ??= error;
            // The first failure cancels the rest: nothing else is fetched or published.
            controller.abort(error);
          }
        }),
      ),
    );
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
  if (firstError !== undefined) throw firstError;
  return results;
}

async function runOne<T>(
  first: Entry,
  options: PrepareOptions,
  sandbox: Sandbox,
  signal: AbortSignal,
  finish: (job: Job, context: ProviderContext) => Promise<T>,
): Promise<T> {
  const { source, entry, provider } = first;
  if (signal.aborted) throw new SkillAbortedError(entry, { cause: signal.reason });
  let phase: Phase = 'resolve';
  let privateDir: string;
  try {
    privateDir = await sandbox.makePrivateDir();
  } catch (error) {
    throw preparationError(error, entry, 'resolve', signal);
  }
  let outcome: { ok: true; value: T } | { ok: false; error: unknown };
  try {
    const context: ProviderContext = {
      sandbox,
      privateDir,
      secrets: options.secrets ?? environmentSecrets,
      vault: options.vault ?? NO_VAULT,
      facts: options.cache,
      signal,
      ...(options.limits === undefined ? {} : { limits: options.limits }),
    };
    // The network boundary opens the hosts the source itself names, and nothing else.
    if (sandbox.allowEgress) await sandbox.allowEgress(provider.egressHosts(source), signal);
    const resolved = await provider.resolve(source, context);
    assertResolved(resolved, entry);
    if (first.lock) assertLocked(first.lock, resolved, entry);
    options.onProgress?.({ type: 'resolved', index: entry.index, name: entry.name, ...resolved });
    phase = 'publish';
    const notify: Job['notify'] = (event) => options.onProgress?.({ ...event, index: entry.index, name: entry.name });
    outcome = { ok: true, value: await finish({ ...first, resolved, notify }, context) };
  } catch (error) {
    const unwrapped = error instanceof PhaseError ? error.cause : error;
    outcome = {
      ok: false,
      error: preparationError(unwrapped, entry, error instanceof PhaseError ? error.phase : phase, signal),
    };
  }
  // The private folder held credentials: its removal is part of the result. A removal that
  // fails is a failure, whatever happened before.
  try {
    await sandbox.removePrivateDir(privateDir);
  } catch (cleanupError) {
    throw Object.assign(
      new CredentialCleanupError(entry, { cause: cleanupError }),
      outcome.ok ? {} : { original: outcome.error },
    );
  }
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/**
 * The store key of an entry. Its scope is the canonical source (for git, the repository):
 * an object is shared only by declarations of the same source, because a content id says
 * what the content is, not that this declaration can obtain it. A repository of one's own
 * can name the tree id of someone else's private directory (a tree object needs no blobs);
 * scoped, it finds nothing, and its fetch fails for lack of the files.
 */
function cacheKeyOf({ source, declaration }: Entry, resolved: ResolvedSkillSource): CacheKey {
  return { provider: source.provider, declaration, ...resolved, scope: source.source };
}

/** Both fields go into cache keys and results: they must be non-empty public strings. */
function assertResolved(resolved: ResolvedSkillSource, entry: EntryRef): void {
  const ok = (value: unknown) =>
    typeof value === 'string' && value !== '' && value.length <= 256 && !/[\s\0]/.test(value);
  if (!resolved || !ok(resolved.version) || !ok(resolved.contentId)) {
    throw new ProviderResultInvalidError(entry);
  }
}
