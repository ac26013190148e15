import {
  GitError,
  GitUnsupportedUrlError,
  isFullCommitId,
  normalizeRemoteUrl,
  refNameProblem,
  remoteHelperOf,
} from '@agentproto/git';
import {
  SkillEntryInvalidError,
  SkillNameInvalidError,
  SkillRefInvalidError,
  SkillRepositoryInvalidError,
  SkillUrlHasCredentialsError,
  type EntryLocation,
} from '../entries/errors.js';
import { skillNameProblem } from '../entries/name.js';
import { normalizePath } from '../entries/path.js';
import {
  quote,
  readsAsPassword,
  showSource,
  splitHostPort,
  splitScp,
  splitUrlPrefix,
  SSH_USER,
} from '../entries/render.js';
import type { SkillSource } from '../provider.js';
import { type GitLocation, locationOf } from './transport.js';

// The git provider's source grammar: the one place a git source (a git string, or the
// `source` and `version` of a git object entry) is read. The entry parser asks it for
// every git entry, and the provider reads the typed GitSource it made (gitSourceOf), so
// a source is parsed once, under one set of rules.

/**
 * The git string form of a skill entry: `repository[@ref][#directory]`.
 *
 * | Part         | Accepted                                                              | Becomes            |
 * |--------------|-----------------------------------------------------------------------|--------------------|
 * | repository   | `https://host[:port]/path`                                            | `source`, verbatim |
 * |              | `http://host[:port]/path` (parsed here; the provider decides if allowed) |                 |
 * |              | `ssh://[user@]host[:port]/path`                                       |                    |
 * |              | `[user@]host:path` (scp-like, e.g. `git@code.example.com:team/skills.git`) |               |
 * | `@ref`       | everything after the first `@` of the repository's path part, up to `#` | `version`       |
 * | (no `@`)     |                                                                       | `version: 'HEAD'`  |
 * | `#directory` | everything after the first `#` of the string                         | `path`, normalized |
 * | (no `#`)     |                                                                       | `path: ''`         |
 * | name         | the last segment of the directory; at the root, the last segment of the repository path without `.git` | `name` |
 *
 * Details, in the order they are checked:
 *
 * - no whitespace or control character anywhere (a directory with a space needs the object form);
 * - the string is cut at its first `#`; an empty `#` (`…#`) is refused: leave it out for the root;
 * - the repository's path part is what follows the authority (`scheme://authority`, which
 *   ends at the first `/`) or, for the scp-like form, what follows the `:` after the host.
 *   The first `@` of that part introduces the ref, so the `git@` of an ssh address is never
 *   read as a ref, a ref may hold `/` (`feature/x`) and `@` (`a@b`), and **a repository
 *   path cannot hold `@`** in this form (use the object form for one that does). An empty
 *   `@` (`…@` or `…@#dir`) is refused: leave it out for `HEAD`;
 * - schemes: `https`, `http`, `ssh`, in any case; anything else is refused (`git://` has
 *   no transport security, `file://` reads the host's disk);
 * - credentials are refused before anything else is echoed: any userinfo in `http(s)://`
 *   (`user:pass@`, `token@`, even an empty `@`), a userinfo with a `:` in `ssh://`, an
 *   authority that is not `host[:port]` but is followed by an `@` (a password holding a
 *   `/`), and an scp-like address without a user that reads as `user:password@host/…`
 *   (see readsAsPassword). Messages show the masked text only;
 * - host: ASCII labels of `A-Z a-z 0-9 _ -` (no label starts or ends with `-`), or a
 *   bracketed IPv6 address; port: 1–65535, URL forms only; ssh user: `A-Z a-z 0-9 . _ -`,
 *   not starting with `-`;
 * - repository path: not empty (`/` alone is empty); no `?` (a query), no `\`; in URL
 *   forms no `.` or `..` segment (URL parsers would resolve them). A `.git` suffix, a
 *   trailing `/` and empty segments are kept as written: the repository is `source`
 *   verbatim, so two spellings of one repository are two declarations (a cache miss,
 *   never a wrong hit);
 * - ref: a name that passes refNameProblem from `@agentproto/git` (git check-ref-format
 *   plus: no leading `-`, no `%`, ≤ 1024 characters); every hex string passes it. Exactly
 *   40 lower-case hex digits is a commit id, used as is (readGitRef); anything else, an
 *   abbreviated id or upper-case hex included, is resolved against the remote's refs;
 * - directory: normalizeDirectoryPath from `@agentproto/git`: relative, `/`-separated, one
 *   trailing `/` allowed, `.` alone is the root; no `.` or `..` segment, no empty segment
 *   (`a//b`), no backslash, no `.git` segment, no control character;
 * - name: the Agent Skills rule (skillNameProblem); a derived name that breaks it asks for
 *   the object form with an explicit `name`.
 *
 * Known limits, where a credential is indistinguishable from a well-formed address and is
 * therefore neither refused nor masked: a password of digits followed by a `/`
 * (`https://u:1234/rest@host/x`: a port and a path), a token that is a valid host name
 * followed by a `/` (`https://tok/rest@host/x`: a host and a path), and an scp-like
 * `user:pass/rest@host/x` (a host, a path and a ref).
 */
export function parseGitString(text: string): SkillSource {
  return parseGitStringAt(text, undefined);
}

/** A repository address, split. `scheme` is `ssh` for the scp-like form. */
export interface GitRepositoryAddress {
  form: 'url' | 'scp';
  scheme: 'https' | 'http' | 'ssh';
  /** The ssh login name, when one is written. */
  user: string | undefined;
  /** As written: a host name, an IPv4 address, or a bracketed IPv6 address. */
  host: string;
  /** Written in a URL form; an scp-like address has none (ssh's default applies). */
  port: number | undefined;
  /** The path as written: `/team/skills.git` for URL forms, `team/skills.git` for the scp-like form. */
  path: string;
  /** The last segment of the path without `.git`: the name a skill at the repository root gets. */
  repositoryName: string;
}

/**
 * Checks a repository address on its own (the `source` of a git object entry) by the rules
 * of the git string form's repository part, except that the path may hold `@` here, since
 * no ref follows. Throws a SkillEntryError; pure.
 */
export function parseGitRepository(text: string): GitRepositoryAddress {
  return parseRepositoryAt(text, { index: undefined, entry: shownSource(text) }, false).address;
}

/** A source for a message, masked; one that is not a string (built by hand) named by its type. */
function shownSource(text: unknown): string {
  return typeof text === 'string' ? showSource(text) : `(${typeof text})`;
}

/**
 * A git source, read once: what the git provider works with. The entry parser makes it
 * (parseGitStringAt, readGitEntryAt) and keeps it beside the SkillSource it returns; the
 * provider's steps find it there (gitSourceOf) instead of reading the text again.
 */
export interface GitSource {
  /** The repository as declared: the entry's `source`, verbatim. */
  readonly repository: string;
  /** Its parts. */
  readonly address: GitRepositoryAddress;
  /** How it is reached: the transport, the host a known_hosts line names, the egress host. */
  readonly location: GitLocation;
  /**
   * What the engines get: an HTTP(S) repository as `@agentproto/git`'s normalizeRemoteUrl
   * writes it, an SSH one as declared.
   */
  readonly url: string;
  /** What `version` asks for. */
  readonly ref: GitRef;
  /** The skill's directory in the repository, as the entry holds it (`''` for the root). */
  readonly path: string;
}

/**
 * A declared version, by the one ref rule (readGitRef): a full commit id, used as is, or a
 * name the remote's refs resolve (`HEAD`, a branch, a tag, `refs/heads/…`, an abbreviated
 * commit id, which a ref of that name wins over).
 */
export type GitRef =
  | { readonly kind: 'commit'; readonly commit: string }
  | { readonly kind: 'name'; readonly name: string };

/**
 * The one ref rule, for git strings, git object entries and the provider alike. A ref must
 * pass refNameProblem (every hex string does); exactly 40 lower-case hex digits is a commit
 * id (AIP-26's `^[0-9a-f]{40}$`, and what `@agentproto/git` takes as one), anything else a
 * name. So upper-case hex is never read as a commit id: `ABCDEF…` (40 digits) is refused
 * by the remote resolution (GIT_UPPERCASE_SHA, which names the lower-case spelling), and a
 * shorter one is a ref name first, then an abbreviation, expanded in either case.
 */
function readGitRef(version: string, at: EntryLocation): GitRef {
  checkGitRef(version, at);
  return isFullCommitId(version) ? { kind: 'commit', commit: version } : { kind: 'name', name: version };
}

/** The typed source of each SkillSource the grammar read, with the fields it was read from. */
const readSources = new WeakMap<SkillSource, { source: string; version: string; path: string; git: GitSource }>();

function remember(skill: SkillSource, git: GitSource): SkillSource {
  readSources.set(skill, { source: skill.source, version: skill.version, path: skill.path, git });
  return skill;
}

/**
 * The typed source of a git SkillSource: the one the entry parser made for this object, or,
 * for a source built by hand (or changed since), read now by the same grammar (its
 * repository as a git object entry's `source`, `version` by readGitRef; `path` as given).
 * Throws a SkillEntryError.
 */
export function gitSourceOf(skill: SkillSource): GitSource {
  const known = readSources.get(skill);
  if (known && known.source === skill.source && known.version === skill.version && known.path === skill.path)
    return known.git;
  const at: EntryLocation = { index: undefined, entry: shownSource(skill.source) };
  const git = readGitEntryAt(skill.source, skill.version, skill.path, at);
  remember(skill, git);
  return git;
}

/**
 * The `source` and `version` of a git object entry, checked by the grammar (the repository
 * path may hold `@` here, since no ref follows), into a GitSource with `path`.
 */
export function readGitEntryAt(source: string, version: string, path: string, at: EntryLocation): GitSource {
  const { address, url } = parseRepositoryAt(source, at, false);
  const ref = readGitRef(version, at);
  return { repository: source, address, location: locationOf(address, source), url, ref, path };
}

/** `skill`, with `git` kept as its typed source. */
export function withGitSource(skill: SkillSource, git: GitSource): SkillSource {
  return remember(skill, git);
}

/** What the git string form means, for the entry at `index` (undefined outside a declaration). */
export function parseGitStringAt(text: string, index: number | undefined): SkillSource {
  const at: EntryLocation = { index, entry: typeof text === 'string' ? showSource(text) : `(${typeof text})` };
  if (typeof text !== 'string') throw new SkillEntryInvalidError('must be a string', undefined, at);
  if (text === '') throw new SkillEntryInvalidError('is empty', undefined, at);
  if (/[\s\u0000-\u001f\u007f-\u009f]/.test(text)) {
    throw new SkillEntryInvalidError(
      'contains whitespace or a control character (use the object form for a directory with a space)',
      undefined,
      at,
    );
  }
  const hash = text.indexOf('#');
  const repositoryAndRef = hash < 0 ? text : text.slice(0, hash);
  const directory = hash < 0 ? undefined : text.slice(hash + 1);
  if (directory === '') {
    throw new SkillEntryInvalidError('has nothing after "#"; leave the "#" out for the repository root', undefined, at);
  }

  const { address, url, ref } = parseRepositoryAt(repositoryAndRef, at, true);
  const source = ref === undefined ? repositoryAndRef : repositoryAndRef.slice(0, -(ref.length + 1));
  if (ref === '') throw new SkillEntryInvalidError('has nothing after "@"; leave the "@" out for HEAD', undefined, at);
  const version = ref ?? 'HEAD';
  const typedRef = readGitRef(version, at);
  const path = directory === undefined ? '' : normalizePath(directory, at);

  const name = path === '' ? address.repositoryName : path.slice(path.lastIndexOf('/') + 1);
  const problem = skillNameProblem(name);
  if (problem !== undefined) throw new SkillNameInvalidError(quote(name, 64), problem, true, at);
  const location = locationOf(address, source);
  return remember(
    { provider: 'git', source, version, path, name, config: {} },
    { repository: source, address, location, url, ref: typedRef, path },
  );
}

/**
 * Why a declared ref is refused, or undefined: refNameProblem from `@agentproto/git`.
 * Every hex string passes; whether it is a commit id is readGitRef's rule.
 */
function gitRefProblem(ref: string): string | undefined {
  return refNameProblem(ref);
}

function checkGitRef(ref: string, at: EntryLocation): void {
  const problem = gitRefProblem(ref);
  // A version that is not a string (a SkillSource built by hand) is named by its type.
  if (problem !== undefined)
    throw new SkillRefInvalidError(quote(typeof ref === 'string' ? ref : `(${typeof ref})`, 64), problem, at);
}

const SCHEMES = new Set(['https', 'http', 'ssh']);

/** A repository part, read: its address, the URL the engines get (see GitSource.url), and the ref after it. */
interface ParsedRepository {
  address: GitRepositoryAddress;
  url: string;
  /** Undefined when there is no `@`, and `''` for an empty one (the caller decides). */
  ref: string | undefined;
}

/** The refusals of one repository text: every message shows it masked. */
interface Refusals {
  invalid(reason: string): SkillRepositoryInvalidError;
  credentials(reason: string): SkillUrlHasCredentialsError;
}

/**
 * The repository part of `text` (with the `@ref` split off when `withRef`), checked: the
 * checks every form shares, then the URL form's or the scp-like form's own.
 */
function parseRepositoryAt(text: string, at: EntryLocation, withRef: boolean): ParsedRepository {
  const shown = shownSource(text);
  const refuse: Refusals = {
    invalid: (reason) => new SkillRepositoryInvalidError(shown, reason, at),
    credentials: (reason) => new SkillUrlHasCredentialsError(shown, reason, at),
  };
  const { invalid } = refuse;
  if (typeof text !== 'string' || text === '') throw invalid('is empty');
  if (/[\s\u0000-\u001f\u007f-\u009f]/.test(text)) throw invalid('contains whitespace or a control character');
  // git's `<transport>::<address>` (ext::, fd::, file::…) by git's own rule, before any
  // other reading: it has the scp-like shape `host:path`, and a `@` later would make it
  // read as a ref or a password instead of what it is.
  const helper = remoteHelperOf(text);
  if (helper !== undefined)
    throw invalid(
      `uses git's remote-helper syntax ${quote(`${helper}::`, 40)}; use https://, http://, ssh:// or user@host:path`,
    );

  const url = splitUrlPrefix(text);
  return url ? parseUrlRepository(text, url, at, withRef, refuse) : parseScpRepository(text, at, withRef, refuse);
}

/** `https://host[:port]/path`, `http://…`, `ssh://[user@]host[:port]/path`. */
function parseUrlRepository(
  text: string,
  url: { scheme: string; start: number; end: number },
  at: EntryLocation,
  withRef: boolean,
  { invalid, credentials }: Refusals,
): ParsedRepository {
  if (!SCHEMES.has(url.scheme))
    throw invalid(`uses the scheme ${quote(url.scheme, 20)}; use https://, http://, ssh:// or user@host:path`);
  const authority = text.slice(url.start, url.end);
  const userEnd = authority.lastIndexOf('@');
  const userinfo = userEnd < 0 ? undefined : authority.slice(0, userEnd);
  if (userinfo !== undefined && url.scheme !== 'ssh') {
    throw credentials('carries credentials in its userinfo; remove them (HTTP credentials come from the vault)');
  }
  if (userinfo?.includes(':')) {
    throw credentials('carries a password in its userinfo; remove it (ssh uses a deploy key named in config)');
  }
  const hostPort = authority.slice(userEnd + 1);
  const split = splitHostPort(hostPort);
  if (!split) {
    // `https://alice:S3CRET/…@host/…`: the password ended the authority early.
    if (text.indexOf('@', url.end) >= 0 && hostPort.includes(':')) {
      throw credentials('reads as user:password@host (the authority is not host[:port]); remove the credentials');
    }
    throw invalid('has no valid host[:port] (an ASCII host name or a bracketed IPv6 address, a port in 1-65535)');
  }
  if (userinfo !== undefined && !SSH_USER.test(userinfo))
    throw invalid('has an invalid user name (letters, digits, ".", "_", "-")');
  if (url.end < text.length && text[url.end] !== '/') throw invalid('has a query or fragment after its host');
  const pathPart = text.slice(url.end);
  const { path, ref } = splitRef(pathPart, withRef);
  const problem = repositoryPathProblem(path, true);
  if (problem !== undefined) throw invalid(problem);
  const repository = text.slice(0, url.end) + path;
  const normalized = checkWithGit(repository, at);
  return {
    address: {
      form: 'url',
      scheme: url.scheme as GitRepositoryAddress['scheme'],
      user: userinfo,
      host: split.host,
      port: split.port,
      path,
      repositoryName: repositoryName(path),
    },
    url: url.scheme === 'ssh' ? repository : normalized,
    ref,
  };
}

/** `[user@]host:path`, git's scp-like SSH address. */
function parseScpRepository(
  text: string,
  at: EntryLocation,
  withRef: boolean,
  { invalid, credentials }: Refusals,
): ParsedRepository {
  const scp = splitScp(text);
  if (!scp) {
    throw invalid(
      'is not in a git form: https://host/path, http://host/path, ssh://[user@]host[:port]/path or [user@]host:path',
    );
  }
  if (readsAsPassword(scp)) {
    throw credentials(
      `reads as user:password@host, and credentials are not allowed; if ${quote(scp.host, 64)} is a host, ` +
        `write the repository path with a "/" or a ".git" suffix (${scp.host}:./repo)`,
    );
  }
  if (scp.user !== undefined && !SSH_USER.test(scp.user)) {
    throw invalid('has an invalid user name (letters, digits, ".", "_", "-")');
  }
  if (!splitHostPort(scp.host)) {
    throw invalid('has no valid host before its ":" (an ASCII host name or a bracketed IPv6 address)');
  }
  const { path, ref } = splitRef(scp.rest, withRef);
  if (path === '') throw invalid('has no repository path after its ":"');
  const problem = repositoryPathProblem(path, false);
  if (problem !== undefined) throw invalid(problem);
  const repository = text.slice(0, scp.restStart) + path;
  checkWithGit(repository, at);
  return {
    address: {
      form: 'scp',
      scheme: 'ssh',
      user: scp.user,
      host: scp.host,
      port: undefined,
      path,
      repositoryName: repositoryName(path),
    },
    url: repository,
    ref,
  };
}

/**
 * The repository as @agentproto/git will see it, checked by git's own rules
 * (normalizeRemoteUrl): one definition of a usable address, so no form this parser
 * accepts is refused later, or worse, accepted here and handed to a program that reads it
 * differently. Above all git's remote-helper syntax (`ext::…`, `fd::…`, `file::…`), which
 * has the scp-like shape `host:path` here, is refused before any provider or process runs.
 * Every scheme is allowed here with plain http to any host: which of them an entry may use
 * is the provider's decision (`allowInsecureHttp`, the sandbox's transports). Returns the
 * normalized URL.
 */
function checkWithGit(repository: string, at: EntryLocation): string {
  try {
    return normalizeRemoteUrl(repository, {
      protocols: ['https:', 'http:', 'ssh:'],
      engine: 'git provider',
      allowInsecureHttp: true,
    });
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    const shown = showSource(repository);
    if (error.code === 'GIT_URL_HAS_CREDENTIALS')
      throw new SkillUrlHasCredentialsError(shown, 'carries credentials; remove them', at);
    const reason =
      error instanceof GitUnsupportedUrlError
        ? `uses ${quote(error.protocol, 40)}; use https://, http://, ssh:// or user@host:path`
        : `is refused by git's URL rules: ${(error as { reason?: string }).reason ?? error.code}`;
    throw new SkillRepositoryInvalidError(shown, reason, at);
  }
}

/** The path part split at its first `@` when a ref may follow. */
function splitRef(pathPart: string, withRef: boolean): { path: string; ref: string | undefined } {
  const at = withRef ? pathPart.indexOf('@') : -1;
  return at < 0 ? { path: pathPart, ref: undefined } : { path: pathPart.slice(0, at), ref: pathPart.slice(at + 1) };
}

function repositoryPathProblem(path: string, isUrl: boolean): string | undefined {
  if (path.replace(/\//g, '') === '') return 'has no repository path';
  if (path.includes('?')) return 'has a query ("?"); a query is not allowed';
  if (path.includes('\\')) return 'has a backslash in its path';
  if (isUrl && path.split('/').some((part) => part === '.' || part === '..'))
    return 'has a "." or ".." segment in its path';
  return undefined;
}

/** The last non-empty segment of a repository path, without a `.git` suffix. */
function repositoryName(path: string): string {
  const segments = path.split('/').filter((part) => part !== '');
  const last = segments[segments.length - 1] ?? '';
  return last.replace(/\.git$/i, '');
}
