import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import {
  BaseSkillProvider,
  SecretMissingError,
  SkillConfigError,
  type FetchContext,
  type ProviderContext,
  type ResolvedSkillSource,
  type SkillSource,
} from '@agentproto/skill-providers';
import {
  TarballAuthError,
  TarballDigestMismatchError,
  TarballHttpError,
  TarballNotFoundError,
  TarballRequestError,
  TarballTokenInvalidError,
  TarballTokenNotApprovedError,
  TarballTooLargeError,
} from './errors.js';
import { extractSelected } from './extract.js';

/** The deployment's list of token secret names that agent configuration may use. */
export const TOKEN_ALLOWLIST_VARIABLE = 'TARBALL_TOKEN_SECRET_NAMES';

export interface TarballProviderOptions {
  /**
   * Secret names a declaration may put in `config.token_secret_name`. Agent configuration
   * chooses among these; it cannot make the host read any other secret. By default the
   * comma-separated list in the TARBALL_TOKEN_SECRET_NAMES environment variable, read when a
   * source is validated (the list names secrets; it holds none); unset, only archives that
   * need no token.
   */
  tokenSecretNames?: readonly string[];
  /** Largest archive downloaded, in bytes. Default 256 MiB. */
  maxArchiveBytes?: number;
  /** Most bytes of the tar stream once inflated. Default 1 GiB. */
  maxUnpackedBytes?: number;
  /** Most files extracted for one skill. Default 20,000. */
  maxFiles?: number;
}

/** The one accepted form of `version`: the SHA-256 of the .tar.gz file, as published. */
const PIN = /^sha256:[0-9a-f]{64}$/;
const SECRET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const OPTIONS = ['token_secret_name'] as const;
/** RFC 6750's b64token is narrower; this only keeps out what would break the header. */
const BEARER_TOKEN = /^[\x21-\x7e]+$/;
/** Longest content id the core accepts. */
const MAX_CONTENT_ID = 256;

/**
 * Skills published as a .tar.gz at an HTTPS URL and pinned by the archive's SHA-256.
 *
 * `resolve` asks the server (HEAD) on every preparation, with the current token, so a
 * revoked token fails even when the skill is already in the store; it returns the pin as
 * the version. `fetch`, only on a miss, downloads into the private folder, checks the
 * digest, and only then extracts the selected directory.
 *
 * The HTTP requests run in this process (Node's fetch), and the archive is written to the
 * private folder directly: use it with a sandbox whose private folder is on this machine,
 * such as localSandbox.
 */
export class TarballSkillProvider extends BaseSkillProvider {
  readonly id = 'tarball';
  private readonly tokenSecretNames: readonly string[] | undefined;
  private readonly maxArchiveBytes: number;
  private readonly maxUnpackedBytes: number;
  private readonly maxFiles: number;

  constructor(options: TarballProviderOptions = {}) {
    super();
    this.tokenSecretNames = options.tokenSecretNames ? [...options.tokenSecretNames] : undefined;
    this.maxArchiveBytes = options.maxArchiveBytes ?? 256 * 1024 * 1024;
    this.maxUnpackedBytes = options.maxUnpackedBytes ?? 1024 * 1024 * 1024;
    this.maxFiles = options.maxFiles ?? 20_000;
  }

  validate(source: SkillSource): void {
    this.urlOf(source);
    if (!PIN.test(source.version)) {
      throw new SkillConfigError(
        source.source,
        'version',
        'must be the archive\'s digest, "sha256:<64 lowercase hex>"',
      );
    }
    for (const option of Object.keys(source.config)) {
      if (!(OPTIONS as readonly string[]).includes(option))
        throw new SkillConfigError(source.source, option, 'is not an option of the tarball provider');
    }
    this.tokenSecretNameOf(source);
  }

  egressHosts(source: SkillSource): string[] {
    // `host` keeps a non-default port and drops the default one, as egress rules expect.
    return [this.urlOf(source).host];
  }

  async resolve(source: SkillSource, context: ProviderContext): Promise<ResolvedSkillSource> {
    const url = this.urlOf(source);
    const secretName = this.tokenSecretNameOf(source);
    const headers = await this.headersFor(secretName, context);
    // The pin already says which bytes are wanted; what is left to find out is whether this
    // credential may still read them. Asked on every preparation, cache hits included.
    let response = await this.request(url, 'HEAD', headers, context.signal);
    if (response.status === 405 || response.status === 501) {
      // A server without HEAD: one byte of the archive answers the same question.
      response = await this.request(url, 'GET', { ...headers, range: 'bytes=0-0' }, context.signal);
      await response.body?.cancel().catch(() => undefined);
    }
    this.checkStatus(url, response, secretName);
    return { version: source.version, contentId: contentIdOf(source.version, source.path) };
  }

  async fetch(source: SkillSource, resolved: ResolvedSkillSource, context: FetchContext): Promise<void> {
    const url = this.urlOf(source);
    const expected = resolved.version;
    if (!PIN.test(expected))
      throw new SkillConfigError(
        source.source,
        'version',
        'must be the archive\'s digest, "sha256:<64 lowercase hex>"',
      );
    const secretName = this.tokenSecretNameOf(source);
    // Read again rather than kept from resolve: the token lives in memory for one request
    // at a time, and is never written anywhere (so writeCredential is not needed here).
    const headers = await this.headersFor(secretName, context);
    const response = await this.request(url, 'GET', headers, context.signal);
    try {
      this.checkStatus(url, response, secretName);
      const encoding = response.headers.get('content-encoding');
      // fetch would silently inflate a gzip Content-Encoding, and the digest would be of
      // other bytes than the published file.
      if (encoding !== null && encoding.toLowerCase() !== 'identity') {
        throw new TarballHttpError(
          url.href,
          response.status,
          `the archive was sent with Content-Encoding "${encoding}"; serve the .tar.gz as is`,
        );
      }
      const length = Number(response.headers.get('content-length') ?? NaN);
      if (length > this.maxArchiveBytes)
        throw new TarballTooLargeError(url.href, `the archive is ${length} bytes, over ${this.maxArchiveBytes}`);
    } catch (error) {
      await response.body?.cancel().catch(() => undefined);
      throw error;
    }

    // The archive goes to the private folder: it is outside any workspace, made for this
    // acquisition only, and removed by the core whatever happens.
    const archive = join(context.privateDir, 'archive.tar.gz');
    const actual = await this.download(url, response, archive, context.signal);
    // Nothing is extracted before the bytes are known to be the pinned ones.
    if (actual !== expected) throw new TarballDigestMismatchError(url.href, expected, actual);
    await extractSelected({
      url: url.href,
      archive,
      path: source.path,
      destination: context.destination,
      signal: context.signal,
      maxUnpackedBytes: this.maxUnpackedBytes,
      maxFiles: this.maxFiles,
    });
  }

  /** The source URL, checked: https (http only to this machine), no userinfo, query or fragment. */
  private urlOf(source: SkillSource): URL {
    let url: URL;
    try {
      url = new URL(source.source);
    } catch {
      throw new SkillConfigError(source.source, 'source', 'is not a URL');
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) {
      throw new SkillConfigError(
        source.source,
        'source',
        'must be an https:// URL (plain http:// only to a loopback address)',
      );
    }
    // The URL goes into the cache key, results and messages: no credential may ride in it.
    if (url.username !== '' || url.password !== '')
      throw new SkillConfigError(source.source, 'source', 'must not hold credentials; use token_secret_name');
    if (source.source.includes('?'))
      throw new SkillConfigError(
        source.source,
        'source',
        'must not have a query (signed URLs are credentials); use token_secret_name',
      );
    if (source.source.includes('#')) throw new SkillConfigError(source.source, 'source', 'must not have a fragment');
    return url;
  }

  /** The configured token secret name, if any, after checking it is approved. Reads no secret. */
  private tokenSecretNameOf(source: SkillSource): string | undefined {
    if (!('token_secret_name' in source.config)) return undefined;
    const name = source.config.token_secret_name;
    if (typeof name !== 'string' || !SECRET_NAME.test(name)) {
      throw new SkillConfigError(
        source.source,
        'token_secret_name',
        'must be a plain secret name (letters, digits, ".", "_", "-")',
      );
    }
    if (!this.approvedTokenSecretNames().includes(name))
      throw new TarballTokenNotApprovedError(name, TOKEN_ALLOWLIST_VARIABLE);
    return name;
  }

  /**
   * The option when the host gave one; otherwise the deployment's environment, read on each
   * validation, as the git provider reads its deploy key list. This is what lets a package
   * loaded by name (which the host cannot pass options to) still be configured by the
   * deployment and never by the declaration.
   */
  private approvedTokenSecretNames(): readonly string[] {
    if (this.tokenSecretNames) return this.tokenSecretNames;
    return (process.env[TOKEN_ALLOWLIST_VARIABLE] ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
  }

  private async headersFor(secretName: string | undefined, context: ProviderContext): Promise<Record<string, string>> {
    // Ask for the file as stored: no transfer encoding that fetch would undo behind our back.
    const headers: Record<string, string> = { 'accept-encoding': 'identity' };
    if (secretName === undefined) return headers;
    const value = await context.secrets(secretName);
    if (typeof value !== 'string' || value.trim() === '') throw new SecretMissingError(secretName);
    const token = value.trim();
    // Checked here because fetch's own header check quotes the bad value in its message.
    if (!BEARER_TOKEN.test(token)) throw new TarballTokenInvalidError(secretName);
    headers.authorization = `Bearer ${token}`;
    return headers;
  }

  private async request(
    url: URL,
    method: 'HEAD' | 'GET',
    headers: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Response> {
    try {
      // Redirects are not followed: egressHosts names only the URL's own host, and a
      // redirect elsewhere would both leave it and carry the request to a host nobody pinned.
      return await fetch(url, { method, headers, signal, redirect: 'manual' });
    } catch (error) {
      signal.throwIfAborted();
      // A new error, not the network one as cause: the message names what failed without
      // carrying the request (and its header) along.
      throw new TarballRequestError(url.href, method, networkReason(error));
    }
  }

  private checkStatus(url: URL, response: Response, secretName: string | undefined): void {
    const { status } = response;
    if (status >= 200 && status < 300) return;
    if (status === 401 || status === 403) throw new TarballAuthError(url.href, status, secretName);
    if (status === 404 || status === 410) throw new TarballNotFoundError(url.href, status);
    if (status >= 300 && status < 400) {
      throw new TarballHttpError(
        url.href,
        status,
        `the server redirects (HTTP ${status}); redirects are not followed, declare the archive's final URL`,
      );
    }
    throw new TarballHttpError(url.href, status, `the server answered HTTP ${status}`);
  }

  /**
   * Streams the body to `path` (created, mode 0600) and returns its digest. Every write is
   * awaited before the next read, so on cancellation nothing is still writing into the
   * private folder when the core removes it.
   */
  private async download(url: URL, response: Response, path: string, signal: AbortSignal): Promise<string> {
    const body = response.body;
    if (!body) throw new TarballHttpError(url.href, response.status, 'the response has no body');
    const hash = createHash('sha256');
    let bytes = 0;
    const file = await open(path, 'wx', 0o600);
    try {
      for await (const chunk of body) {
        bytes += chunk.length;
        // Leaving the loop cancels the body, which closes the connection.
        if (bytes > this.maxArchiveBytes)
          throw new TarballTooLargeError(url.href, `the archive is over ${this.maxArchiveBytes} bytes`);
        hash.update(chunk);
        await file.write(chunk);
      }
    } catch (error) {
      signal.throwIfAborted();
      if (error instanceof TarballTooLargeError) throw error;
      throw new TarballRequestError(url.href, 'GET', networkReason(error));
    } finally {
      await file.close();
    }
    return `sha256:${hash.digest('hex')}`;
  }
}

/**
 * The content id: the archive digest and the selected path. The digest names every byte
 * of the archive, so the pair names the extracted tree exactly, whatever URL served it. The
 * path is percent-encoded per segment; one too long for the core's 256 characters is
 * replaced by its own digest (after `#`, which an encoded path never holds).
 */
export function contentIdOf(pin: string, path: string): string {
  const readable = `${pin}:${path.split('/').map(encodeURIComponent).join('/')}`;
  if (readable.length <= MAX_CONTENT_ID) return readable;
  return `${pin}:#${createHash('sha256').update(path, 'utf8').digest('hex')}`;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** The network error's code or message (ECONNREFUSED, a TLS failure), nothing else of it. */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

export function tarballProvider(options: TarballProviderOptions = {}): TarballSkillProvider {
  return new TarballSkillProvider(options);
}
