import {
  type ExpandCommitOptions,
  type FetchLimits,
  type GitAuth,
  type GitEngine,
  type RemoteOptions,
  type RemoteRefs,
  GitAbbreviatedShaError,
  directoryTreeId,
  expandCommit,
  fetchDirectory,
  folderTreeId,
  isomorphicGitEngine,
  listRefs,
  normalizeRemoteUrl,
  resolveRef,
  systemGitEngine,
} from '@agentproto/git';
import { BaseSkillProvider } from '../base-provider.js';
import { maskText } from '../entries/render.js';
import { SkillEntryError, SkillRefInvalidError } from '../entries/errors.js';
import {
  CredentialNotApprovedError,
  SecretMissingError,
  SkillConfigError,
  SkillContentMismatchError,
  TransportUnsupportedError,
} from '../errors.js';
import type { FetchContext, ProviderContext, ResolvedSkillSource, SkillSource } from '../provider.js';
import { type GitRef, type GitSource, gitSourceOf } from './source.js';
import { type GitLocation, knownHostsNames } from './transport.js';

/** The deployment's list of deploy key secret names that agent configuration may use. */
const DEPLOY_KEY_ALLOWLIST_VARIABLE = 'AGENTPROTO_DEPLOY_KEY_SECRET_NAMES';

export interface GitProviderOptions {
  /**
   * Deploy key secret names a declaration may use. By default the comma-separated list in
   * the AGENTPROTO_DEPLOY_KEY_SECRET_NAMES environment variable, read when a source is
   * validated (the list names secrets; it holds none).
   */
  deployKeySecretNames?: readonly string[];
  /** Plain http to hosts that are not loopback; off by default (credentials would travel in clear). */
  allowInsecureHttp?: boolean;
  /**
   * Caps on one skill's directory (entries, bytes, depth), enforced while fetching; a
   * preparation's own `limits` win over these, these over the defaults of @agentproto/git
   * (10,000 entries, 256 MiB, depth 32).
   */
  limits?: FetchLimits;
}

const SSH_OPTIONS = ['deploy_key_secret_name', 'known_hosts'] as const;

/** How one operation reaches the repository: the engine (ref listing and fetches), credentials. */
interface Remote {
  url: string;
  engine: GitEngine;
  auth?: GitAuth;
  allowInsecureHttp?: boolean;
}
const SECRET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * The built-in git provider: public and private HTTPS (HTTP Basic from the host's vault)
 * and SSH with a deploy key. The version is the full commit a ref resolves to, the content
 * id the git tree id of the selected directory: a branch that moved without touching the
 * skill resolves to a new version with the same content id, which is a cache hit.
 */
export class GitSkillProvider extends BaseSkillProvider {
  readonly id = 'git';
  private readonly options: GitProviderOptions;

  constructor(options: GitProviderOptions = {}) {
    super();
    this.options = options;
  }

  validate(source: SkillSource): void {
    const { location } = this.sourceOf(source);
    for (const option of Object.keys(source.config)) {
      if (!(SSH_OPTIONS as readonly string[]).includes(option))
        throw new SkillConfigError(source.source, option, 'is not an option of the git provider');
      if (location.transport !== 'ssh')
        throw new SkillConfigError(source.source, option, 'applies only to SSH sources');
    }
    if (location.transport === 'ssh') this.sshConfigOf(source, location);
  }

  egressHosts(source: SkillSource): string[] {
    return [this.sourceOf(source).location.egress];
  }

  async resolve(source: SkillSource, context: ProviderContext): Promise<ResolvedSkillSource> {
    const git = this.sourceOf(source);
    const { url, ...remote } = await this.open(source, git, context, 'resolve');
    const options: RemoteOptions = { ...remote, workDir: context.privateDir, signal: context.signal };
    // Listing refs is the authorization check: it runs on every preparation, with the
    // current credential, also for a full commit id and also when the result is cached.
    const refs = await listRefs(url, options);
    const commit = await this.commitOf(git.ref, refs, url, { ...options, limits: this.limitsFor(context) });
    // A commit's tree never changes, so the tree id of a directory at a commit is a fact
    // worth keeping: a hit then costs one ref listing and nothing else. The store recalls
    // only facts its own callers learned from the origin, never the shared registry's: the
    // tree id is what a tree from that registry is proven against (verifyTree), so it must
    // come from the origin, whose commit and trees are hashed to their ids on the way.
    const fact = `git-tree\0${url}\0${commit}\0${git.path}`;
    const known = await context.facts.recall(fact);
    if (known !== undefined) return { version: commit, contentId: known };
    // The caps hold here too: without git in the sandbox the whole commit is fetched now.
    // Only the commit and the trees on the way to the directory: they name it, which is all
    // a hit in the store or its registry tier needs. A miss fetches the rest in fetch.
    const { tree } = await directoryTreeId(url, commit, git.path, { ...options, limits: this.limitsFor(context) });
    await context.facts.remember(fact, tree);
    return { version: commit, contentId: tree };
  }

  async fetch(source: SkillSource, resolved: ResolvedSkillSource, context: FetchContext): Promise<void> {
    const git = this.sourceOf(source);
    const { url, ...remote } = await this.open(source, git, context, 'fetch');
    const fetched = await fetchDirectory(url, resolved.version, git.path, context.destination, {
      ...remote,
      workDir: context.privateDir,
      signal: context.signal,
      limits: this.limitsFor(context),
    });
    if (fetched.tree !== resolved.contentId) {
      throw new SkillContentMismatchError(
        resolved.contentId,
        fetched.tree,
        `${source.source}: "${git.path || '.'}" at ${resolved.version} is tree ${fetched.tree}, not ${resolved.contentId}`,
        source.source,
      );
    }
  }

  /** The preparation's caps over the provider's: the host sets both. */
  private limitsFor(context: ProviderContext): FetchLimits {
    return { ...this.options.limits, ...context.limits };
  }

  /**
   * The proof for a tree from the store's shared remote tier: git's own hashing. Its files,
   * links, execute bits and folders must hash to the tree id resolve got from the origin.
   * A directory holding a submodule never passes (it is written as an empty folder, the
   * tree records a commit), so such a skill always comes from the origin.
   */
  async verifyTree(tree: string, resolved: ResolvedSkillSource, signal: AbortSignal): Promise<void> {
    const actual = await folderTreeId(tree, { signal });
    if (actual !== resolved.contentId) {
      throw new SkillContentMismatchError(
        resolved.contentId,
        actual,
        `the tree hashes to git tree ${actual}, not ${resolved.contentId} as the origin says`,
      );
    }
  }

  /**
   * The source as the git grammar read it (once: the entry parser's reading is reused), and
   * allowed by this provider: plain http only to a loopback host unless `allowInsecureHttp`.
   * A source built by hand that the grammar refuses is SKILL_CONFIG_INVALID, masked.
   */
  private sourceOf(source: SkillSource): GitSource {
    let git: GitSource;
    try {
      git = gitSourceOf(source);
    } catch (error) {
      if (error instanceof SkillRefInvalidError)
        throw new SkillConfigError(source.source, 'version', `is not a commit id or a ref name: ${error.reason}`);
      if (error instanceof SkillEntryError)
        throw new SkillConfigError(maskedSource(source.source), 'source', reasonOf(error));
      throw error;
    }
    // The grammar checked the address with @agentproto/git's rules, plain http to any host
    // allowed: only that last rule is this provider's own to apply.
    if (git.address.scheme === 'http' && !this.options.allowInsecureHttp) {
      try {
        normalizeRemoteUrl(source.source, { protocols: ['https:', 'http:', 'ssh:'], engine: 'git provider' });
      } catch (error) {
        throw new SkillConfigError(source.source, 'source', (error as Error).message);
      }
    }
    return git;
  }

  /** The SSH options, checked; the secret name approved before anything reads it. */
  private sshConfigOf(source: SkillSource, location: GitLocation): { secretName: string; knownHosts: string } {
    const secretName = source.config.deploy_key_secret_name;
    const knownHosts = source.config.known_hosts;
    if (typeof secretName !== 'string' || secretName === '') {
      throw new SkillConfigError(source.source, 'deploy_key_secret_name', 'is required for SSH sources');
    }
    if (typeof knownHosts !== 'string' || knownHosts.trim() === '') {
      throw new SkillConfigError(
        source.source,
        'known_hosts',
        'is required for SSH sources: the verified public host key, as a known_hosts line',
      );
    }
    if (!SECRET_NAME.test(secretName))
      throw new SkillConfigError(source.source, 'deploy_key_secret_name', 'must be a plain secret name');
    if (knownHosts.includes('\0')) throw new SkillConfigError(source.source, 'known_hosts', 'contains NUL');
    const names = knownHostsNames(knownHosts);
    if (!names.some((name) => name === location.knownHostsName || name.startsWith('|1|'))) {
      throw new SkillConfigError(
        source.source,
        'known_hosts',
        `has no line for ${location.knownHostsName}${location.knownHostsName.startsWith('[') ? '' : ' (for a nonstandard port use the [host]:port form and an ssh:// URL)'}`,
      );
    }
    if (!this.approvedSecretNames().includes(secretName))
      throw new CredentialNotApprovedError(secretName, DEPLOY_KEY_ALLOWLIST_VARIABLE);
    return { secretName, knownHosts };
  }

  private approvedSecretNames(): readonly string[] {
    if (this.options.deployKeySecretNames) return this.options.deployKeySecretNames;
    return (process.env[DEPLOY_KEY_ALLOWLIST_VARIABLE] ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
  }

  /**
   * The engine and credentials for one operation. SSH: the deploy key and the pinned
   * known_hosts are written into the private folder (0600) and used by path only; there is
   * no fallback to another identity or transport. HTTPS: Basic credentials from the vault.
   */
  private async open(
    source: SkillSource,
    git: GitSource,
    context: ProviderContext,
    phase: 'resolve' | 'fetch',
  ): Promise<Remote> {
    const { location } = git;
    const { sandbox } = context;
    if (!sandbox.capabilities[location.transport])
      throw new TransportUnsupportedError(location.transport.toUpperCase(), sandbox.name);
    const insecure = this.options.allowInsecureHttp ? { allowInsecureHttp: true } : {};
    if (location.transport === 'ssh') {
      const { secretName, knownHosts } = this.sshConfigOf(source, location);
      const key = await context.secrets(secretName);
      if (typeof key !== 'string' || key.trim() === '') throw new SecretMissingError(secretName);
      // resolve and fetch each write their own copy: fetch runs only on a miss, and never
      // has to guess whether resolve's files are still there.
      const identityFile = await this.writeCredential(
        context,
        `${phase}-deploy-key`,
        key.endsWith('\n') ? key : `${key}\n`,
      );
      const knownHostsFile = await this.writeCredential(
        context,
        `${phase}-known-hosts`,
        knownHosts.endsWith('\n') ? knownHosts : `${knownHosts}\n`,
      );
      const engine = systemGitEngine({ host: sandbox, ssh: { identityFile, knownHostsFile } });
      return { url: git.url, engine, ...insecure };
    }
    const { url } = git;
    const credential = await context.vault(url);
    const auth: GitAuth | undefined = credential
      ? () => ({
          Authorization: `Basic ${Buffer.from(`${credential.username}:${credential.password}`).toString('base64')}`,
        })
      : undefined;
    // On this machine, HTTP is spoken in-process: the ref listing (the one exchange of a
    // cache hit) is one protocol v2 `ls-refs` without starting git and its HTTP helper, and
    // each fetch one protocol v2 `fetch` whose pack git indexes in the private gitdir.
    const engine = sandbox.capabilities.git
      ? systemGitEngine({ host: sandbox, httpInProcess: sandbox.capabilities.inProcess })
      : isomorphicGitEngine();
    return { url, engine, ...(auth ? { auth } : {}), ...insecure };
  }

  /** A full commit as is; a ref through the ls-remote contract; a short commit id by fetching history. */
  private async commitOf(ref: GitRef, refs: RemoteRefs, url: string, options: ExpandCommitOptions): Promise<string> {
    if (ref.kind === 'commit') return ref.commit;
    try {
      return resolveRef(refs, ref.name).commit;
    } catch (error) {
      if (error instanceof GitAbbreviatedShaError) return expandCommit(url, ref.name, options);
      throw error;
    }
  }
}

/** A source built by hand, for a message: masked (see render.ts), or named by its type when it is not a string. */
function maskedSource(source: unknown): string {
  return typeof source === 'string' ? maskText(source) : `(${typeof source})`;
}

/** Why the grammar refused a repository (SkillRepositoryInvalidError, SkillUrlHasCredentialsError): its `reason`. */
function reasonOf(error: SkillEntryError): string {
  const { reason } = error as SkillEntryError & { reason?: unknown };
  return typeof reason === 'string' ? reason : error.message;
}

export function gitProvider(options: GitProviderOptions = {}): GitSkillProvider {
  return new GitSkillProvider(options);
}
