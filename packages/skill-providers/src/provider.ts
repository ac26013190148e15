import type { FetchLimits } from '@agentproto/git';
import type { Sandbox } from './sandbox/sandbox.js';

/**
 * One skill as a declaration states it, after parsing: the object form, with `path`
 * normalized (`''` is the source root) and `config` always present.
 */
export interface SkillSource {
  /** The provider id: `git`, `local`, or one a host registered. */
  provider: string;
  /** Where the provider finds the skill: a repository URL, a folder, a package URL… */
  source: string;
  /** What the declaration asks for: a ref, a commit, a version; the provider resolves it. */
  version: string;
  /** The skill's directory inside the source, `/`-separated, normalized; `''` for the root. */
  path: string;
  /** The installed name; unique within a declaration. */
  name: string;
  /** Provider options; each provider rejects the ones it does not know. */
  config: Readonly<Record<string, unknown>>;
}

/**
 * What `resolve` returns. Both are public, immutable identifiers: they go into the cache
 * key and into results, so they must never hold a credential.
 */
export interface ResolvedSkillSource {
  /** The exact version: a full commit id, a digest, a release number that never moves. */
  version: string;
  /** The identity of the content: the same bytes have the same id at any version. */
  contentId: string;
}

/** Reads a named secret (a deploy key, a token); undefined when there is none by that name. */
export type SecretReader = (name: string) => Promise<string | undefined> | string | undefined;

/** HTTP Basic credentials for a URL, from the host's vault. */
export interface BasicCredential {
  username: string;
  password: string;
}

/** The host's HTTP Basic vault: credentials for a normalized URL, or undefined for anonymous access. */
export type BasicVault = (url: string) => Promise<BasicCredential | undefined> | BasicCredential | undefined;

/**
 * Facts that never change once true (the tree id of a directory at a commit), remembered
 * across preparations and processes so a cache hit does not redo the work of finding them.
 * Never a secret. The content store implements it (`remember`/`recall`).
 */
export interface FactStore {
  recall(name: string): Promise<string | undefined>;
  remember(name: string, value: string): Promise<void>;
}

/** What `resolve` and `fetch` get from the core. */
export interface ProviderContext {
  /** Where acquisition runs: commands, file writes, the private folder. */
  sandbox: Sandbox;
  /**
   * A unique folder only the sandbox's account can read, outside any workspace, made for
   * this acquisition and removed by the core afterwards. Temporary credentials go here and
   * nowhere else; `resolve` and `fetch` of one entry share it.
   */
  privateDir: string;
  /** Named secrets (deploy keys). Read only names that `validate` approved. */
  secrets: SecretReader;
  /** HTTP Basic credentials by URL. */
  vault: BasicVault;
  /** Immutable facts to reuse across preparations. */
  facts: FactStore;
  /** Fires on cancellation; a provider stops, closes what it opened, and rejects. */
  signal: AbortSignal;
  /**
   * Caps this preparation sets on what one entry may fetch (entries, bytes, depth): over
   * the provider's own caps and the defaults. A provider enforces them while fetching.
   */
  limits?: FetchLimits;
}

export interface FetchContext extends ProviderContext {
  /** Absent when `fetch` starts; the provider creates it and fills it with the skill's directory. */
  destination: string;
}

/**
 * A source of skill directories. The core calls `validate` for every entry before anything
 * else, `resolve` on every preparation (cache hits included: it is the authorization
 * check), and `fetch` only on a cache miss, into a staging folder the core then checks and
 * publishes. A provider never writes into the cache itself.
 */
export interface SkillContentProvider {
  /** The name declarations use in `provider`. */
  readonly id: string;
  /**
   * Checks the source's shape and configuration, and that any credential it names is
   * approved. Reads no secret and touches no network. Throws a SkillError (SkillConfigError,
   * CredentialNotApprovedError, or the provider's own class).
   */
  validate(source: SkillSource): void;
  /** The hosts acquisition connects to (`host` or `host:port`), from the source itself. */
  egressHosts(source: SkillSource): string[];
  /** Authorizes with the current credential and pins the version and content identity. */
  resolve(source: SkillSource, context: ProviderContext): Promise<ResolvedSkillSource>;
  /** Writes exactly `resolved` into `context.destination`. */
  fetch(source: SkillSource, resolved: ResolvedSkillSource, context: FetchContext): Promise<void>;
  /**
   * Proves from a tree alone that it is the content `resolved.contentId` names (git: the
   * files hash to the tree id); throws when it is not. The core calls it on trees from the
   * store's shared remote tier (a registry any machine can write), before they are used.
   * Optional: a provider without it is never served from the remote tier, and what it
   * fetches is not pushed there (no other machine could prove it either).
   */
  verifyTree?(tree: string, resolved: ResolvedSkillSource, signal: AbortSignal): Promise<void>;
}
