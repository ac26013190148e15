import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import type { ContentStore } from '@agentproto/content-cache';
import type { GitAuth, RemoteOptions } from '@agentproto/git';
import type { GithubAccess } from '../code/types.js';
import { PATH_LIMITS } from '../paths/limits.js';
import { DEFAULT_GZIP_LEVEL, writeBundle } from '../tar/index.js';
import { BUNDLE_LAYOUT } from '../tar/write-bundle.js';
import { loadContentCache, loadGit } from './lazy.js';

/** What a floating ref resolved to, for the host to record (AIP-26: "record the resolved SHA"). */
export interface ResolvedGithubRef {
  repo: string;
  ref: string;
  commit: string;
  /** `commit`: no branch or tag has the name, and it is the one commit whose id starts with it. */
  kind: 'branch' | 'tag' | 'head' | 'commit';
  /** True when a tag's resolution came from the 24 h cache. */
  cached: boolean;
}

export interface GithubConnectorOptions {
  /**
   * A token for private repositories (PAT, OAuth or installation token), sent as HTTP Basic
   * auth. Never leaves the connector: no error, event or report holds it. Default none
   * (public repositories only).
   */
  token?: string;
  /**
   * Asked for a fresh token on every request that needs one (short-lived installation
   * tokens); takes the place of `token`. Default none.
   */
  getToken?: () => Promise<string | undefined> | string | undefined;
  /** Where repositories live: `${baseUrl}/${owner}/${name}.git`. Default https://github.com. */
  baseUrl?: string;
  /**
   * Content store for fetched directories, keyed by (repo, commit, path) and kept forever
   * (AIP-26: "Hosts MUST cache fetched github tarballs"). Default: the store at
   * `defaultCacheRoot()` (`$XDG_CACHE_HOME/agentproto`, else `~/.cache/agentproto`), the
   * folder fixed when the connector is made and opened on the first fetch. `false`: nothing
   * is kept, every fetch downloads again.
   */
  cache?: ContentStore | false;
  /** Milliseconds since the epoch; for the tag cache. Default Date.now. */
  clock?: () => number;
  /** Called with every floating ref's resolution, to record the commit (AIP-26). Default none. */
  onResolved?: (resolved: ResolvedGithubRef) => void;
  /**
   * Refuse every ref that is not a full commit id (production registration policy):
   * PinRequiredError, `AIP26_PIN_REQUIRED`. Default false.
   */
  requirePin?: boolean;
  /** Passed to the git client (engine, http, allowInsecureHttp for test servers). Default none. */
  git?: Omit<RemoteOptions, 'auth' | 'signal'>;
}

/** A ref that is not a full commit, refused because the connector requires pins. */
export class PinRequiredError extends Error {
  readonly code = 'AIP26_PIN_REQUIRED';
  constructor(
    readonly repo: string,
    readonly ref: string,
  ) {
    super(`${repo}@${ref}: only full 40-character commit ids are accepted (requirePin)`);
    this.name = 'PinRequiredError';
  }
}

/**
 * A hex name that is no branch or tag of the repository, and the start of no commit
 * reachable from one: neither reading of the name found anything.
 */
export class GithubRefNotFoundError extends Error {
  readonly code = 'AIP26_REF_NOT_FOUND';
  constructor(
    readonly repo: string,
    readonly ref: string,
    /** The full ref names that were looked up before the name was taken as an abbreviated commit. */
    readonly tried: readonly string[],
    options: { cause?: unknown } = {},
  ) {
    super(
      `${repo}@${ref}: no branch or tag is named ${JSON.stringify(ref)} (looked for ${tried.join(', ')}), and no commit reachable from one starts with it; name an existing branch or tag, or use the full 40-character commit id`,
      options,
    );
    this.name = 'GithubRefNotFoundError';
  }
}

const ARCHIVE = 'archive.tar.gz';

/** Tags may move (AIP-26: cached 24 h); branches are resolved on every scan. */
const TAG_TTL_MS = 24 * 60 * 60 * 1000;

/** AIP-26's tag shape (`vN`, `vN.N.N`, …): the only names whose resolution may be reused. */
const TAG_SHAPE = /^v[0-9]+(\.[0-9]+)*$/;

/**
 * The `github` connector of AIP-26 over git smart HTTP, so it works with GitHub, GitHub
 * Enterprise and any git host. Cache contract (aip-26.md, "Cache invalidation for github
 * sources"): content is cached by (repo, resolved commit, path) forever, in the default
 * store unless told otherwise; a full commit is used as is. The spec's table decides by
 * the ref's shape alone; this connector takes the conservative reading: a resolution is
 * reused for 24 h only when the name has the tag shape (`^v[0-9]+(\.[0-9]+)*$`) AND the
 * server lists it as a tag. Every other name (a tag called `stable`, a branch called
 * `v1.2`, an abbreviated commit) is resolved again on every call, so a moved ref is seen
 * on the next scan. Refs are resolved first, as `git ls-remote` lists them; only a hex
 * name no branch or tag has is expanded as an abbreviated commit. A name that is both a
 * branch and a tag is refused.
 *
 * Making the connector throws nothing and touches nothing; its two methods throw:
 *
 * @example
 * ```ts
 * import { defineCode, githubConnector } from '@agentproto/aip-26';
 *
 * const github = githubConnector({
 *   getToken: () => installationToken(), // asked on each request; never in an error
 *   requirePin: process.env.NODE_ENV === 'production',
 *   onResolved: (r) => audit.record(`${r.repo}@${r.ref} -> ${r.commit}`),
 * });
 * const commit = await github.resolveRef('acme/tools', 'v1.2.0');
 * const bundle = await defineCode({ code: manifest.code, workspaceRoot, github });
 * ```
 *
 * @throws {PinRequiredError} `AIP26_PIN_REQUIRED`: with `requirePin`, a ref that is not a full
 *   commit id; from `fetch`, any ref that is not one.
 * @throws {GithubRefNotFoundError} `AIP26_REF_NOT_FOUND`: `resolveRef` of a name that is no branch,
 *   tag or commit of the repository.
 * @throws {GitError} `GIT_AMBIGUOUS_REF`, `GIT_AMBIGUOUS_COMMIT`, `GIT_AUTH_FAILED`,
 *   `GIT_REPOSITORY_NOT_FOUND`, `GIT_LIMIT_EXCEEDED`, `GIT_TRANSPORT`: from the git client
 *   (`fetch` stops at the bundle's remaining caps with `GIT_LIMIT_EXCEEDED`).
 * @throws {ContentCacheError} `CACHE_ROOT_UNUSABLE`, `CACHE_IO`: the default store cannot be used.
 */
export function githubConnector(options: GithubConnectorOptions = {}): GithubAccess {
  const baseUrl = (options.baseUrl ?? 'https://github.com').replace(/\/+$/, '');
  const clock = options.clock ?? Date.now;
  const tags = new Map<string, { commit: string; at: number }>();
  // The folder is fixed now (a later change of XDG_CACHE_HOME does not move it): what names
  // it is read now, and it is named once the content store is loaded. The store is opened on
  // the first fetch, so a connector that only resolves refs creates nothing.
  const rootFrom =
    options.cache === undefined ? { env: { XDG_CACHE_HOME: process.env.XDG_CACHE_HOME }, home: homedir() } : undefined;
  let defaultStore: Promise<ContentStore> | undefined;
  const storeOf = (): Promise<ContentStore> | undefined => {
    if (options.cache === false) return undefined;
    if (options.cache !== undefined) return Promise.resolve(options.cache);
    defaultStore ??= loadContentCache().then(({ defaultCacheRoot, openContentStore }) =>
      openContentStore({ root: defaultCacheRoot(rootFrom!.env, rootFrom!.home) }),
    );
    return defaultStore;
  };
  const auth: GitAuth = async () => {
    const token = options.getToken ? await options.getToken() : options.token;
    return token ? { Authorization: `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}` } : undefined;
  };
  const urlOf = (repo: string) => `${baseUrl}/${repo}.git`;
  const remote = { ...options.git, auth };

  return {
    async resolveRef(repo, ref) {
      const { GitAbbreviatedShaError, GitCommitNotFoundError, expandCommit, isFullCommitId, listRefs, resolveRef } =
        await loadGit();
      if (isFullCommitId(ref)) return ref;
      if (options.requirePin) throw new PinRequiredError(repo, ref);
      const cacheKey = `${repo}\0${ref}`;
      const tag = TAG_SHAPE.test(ref) ? tags.get(cacheKey) : undefined;
      if (tag && clock() - tag.at < TAG_TTL_MS) {
        options.onResolved?.({ repo, ref, commit: tag.commit, kind: 'tag', cached: true });
        return tag.commit;
      }
      let resolved: { commit: string; kind: ResolvedGithubRef['kind'] };
      try {
        resolved = resolveRef(await listRefs(urlOf(repo), remote), ref);
      } catch (error) {
        // Refs win: `cafe1234` may be a branch, and only once no branch or tag has the name
        // is it taken as an abbreviated commit, expanded against the repository's history
        // as git rev-parse would (GIT_COMMIT_NOT_FOUND, GIT_AMBIGUOUS_COMMIT otherwise).
        if (!(error instanceof GitAbbreviatedShaError)) throw error;
        const commit = await expandCommit(urlOf(repo), ref, remote).catch((failure: unknown) => {
          if (failure instanceof GitCommitNotFoundError)
            throw new GithubRefNotFoundError(repo, ref, [`refs/heads/${ref}`, `refs/tags/${ref}`], { cause: failure });
          throw failure;
        });
        resolved = { commit, kind: 'commit' };
      }
      // Tag-shaped names the server calls tags are reused for 24 h; nothing else is kept.
      if (resolved.kind === 'tag' && TAG_SHAPE.test(ref)) tags.set(cacheKey, { commit: resolved.commit, at: clock() });
      options.onResolved?.({ repo, ref, commit: resolved.commit, kind: resolved.kind, cached: false });
      return resolved.commit;
    },

    async fetch(repo, commit, subpath, limits) {
      const { fetchDirectory, isFullCommitId } = await loadGit();
      if (!isFullCommitId(commit)) throw new PinRequiredError(repo, commit);
      const path = subpath ?? '';
      // The bundle's caps hold while fetching (GIT_LIMIT_EXCEEDED, before anything past them
      // is written). git counts folders as entries too: twice the file cap leaves room for them.
      const capped =
        limits === undefined
          ? remote
          : {
              ...remote,
              limits: { maxBytes: limits.maxBytes, maxFiles: limits.maxFiles * 2, maxDepth: PATH_LIMITS.maxDepth },
            };
      const store = storeOf();
      if (!store) {
        const work = await mkdtemp(join(tmpdir(), 'agentproto-github-'));
        try {
          const dest = join(work, 'tree');
          await fetchDirectory(urlOf(repo), commit, path, dest, { ...capped, privateDir: work });
          return await bundleFolder(dest);
        } finally {
          await rm(work, { recursive: true, force: true });
        }
      }
      const declaration = { baseUrl, repo, path };
      const contentId = `${baseUrl}/${repo}@${commit}:${path}`;
      const cache = await store;
      // Two objects per (repo, commit, path), both kept forever: the fetched folder, and the
      // tar.gz made from it, so a later fetch of the same commit reads one file. Only the
      // folder may come from the store's shared remote tier, and only once proven: the
      // origin gives the directory's tree id (commit and trees, no file content, each
      // hashed to its id) and the pulled files must hash to it, since any machine that can
      // push to the registry could otherwise pin its own code to this commit. The archive
      // has no such proof, so it is never pulled or pushed: it is made here from the folder.
      // The archive's key names the bundle layout (entry order, gzip level) that made it, so
      // a store kept by a writer of an earlier layout never hands out its archive: the same
      // commit must give the same bytes whatever the store holds (ADAPTER conformance rule 3).
      const archiveId = `${contentId};layout=${BUNDLE_LAYOUT};gzip=${DEFAULT_GZIP_LEVEL}`;
      const archive = await cache.acquire(
        { provider: 'github-archive', declaration, version: commit, contentId: archiveId },
        async (_destination, ctx) => {
          const folder = await cache.acquire(
            { provider: 'github', declaration, version: commit, contentId },
            async (destination) => {
              await fetchDirectory(urlOf(repo), commit, path, destination, capped);
            },
            { verify: (tree, signal) => proveTree(urlOf(repo), commit, path, tree, { ...remote, signal }) },
          );
          await ctx.writeFile(ARCHIVE, await bundleFolder(folder.path));
        },
      );
      return fs.readFileSync(join(archive.path, ARCHIVE));
    },
  };
}

/** Thrown when a tree from the store's remote tier is not the directory the origin names. */
class GithubTreeMismatchError extends Error {
  readonly code = 'AIP26_TREE_MISMATCH';
  constructor(
    readonly url: string,
    readonly commit: string,
    readonly path: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`${url}: "${path || '.'}" at ${commit} is git tree ${expected}, the tree offered hashes to ${actual}`);
    this.name = 'GithubTreeMismatchError';
  }
}

/** The directory's tree id from the origin, and the tree's own: they must be equal. */
async function proveTree(
  url: string,
  commit: string,
  path: string,
  tree: string,
  options: RemoteOptions,
): Promise<void> {
  const { directoryTreeId, folderTreeId } = await loadGit();
  const [expected, actual] = await Promise.all([
    directoryTreeId(url, commit, path, options).then((found) => found.tree),
    folderTreeId(tree, { signal: options.signal }),
  ]);
  if (expected !== actual) throw new GithubTreeMismatchError(url, commit, path, expected, actual);
}

/**
 * The files of a fetched folder as a tar.gz, links read through (they were checked to stay
 * inside the folder when it was written), so the archive holds no links.
 */
async function bundleFolder(root: string): Promise<Buffer> {
  const realRoot = fs.realpathSync.native(root);
  const entries: { path: string; data: Buffer; executable: boolean }[] = [];
  const walk = (rel: string) => {
    const abs = rel === '' ? root : join(root, rel);
    for (const dirent of fs.readdirSync(abs, { withFileTypes: true })) {
      const childRel = rel === '' ? dirent.name : `${rel}/${dirent.name}`;
      const childAbs = join(abs, dirent.name);
      let isDir = dirent.isDirectory();
      if (dirent.isSymbolicLink()) {
        const real = fs.realpathSync.native(childAbs);
        if (real !== realRoot && !real.startsWith(realRoot + sep))
          throw new Error(`${JSON.stringify(childRel)} links out of the fetched folder`);
        isDir = fs.statSync(real).isDirectory();
        // A link to a folder is not followed: its files are bundled at their own path already.
        if (isDir) continue;
      }
      if (isDir) walk(childRel);
      else {
        const stat = fs.statSync(childAbs);
        entries.push({ path: childRel, data: fs.readFileSync(childAbs), executable: (stat.mode & 0o111) !== 0 });
      }
    }
  };
  walk('');
  return writeBundle(entries);
}
