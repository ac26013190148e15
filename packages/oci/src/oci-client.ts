import { createHash } from 'node:crypto';
import { RegistryError } from './errors.js';
import { checkReference, checkRepository, isDigest, shown } from './names.js';

/** What the auth callback hands back: a user and password (or a PAT), or a ready bearer token. */
export type RegistryCredentials = { username: string; password: string } | { token: string };

/** What the registry asked for, so the callback can pick the right credential. */
export interface AuthChallenge {
  /** The registry's origin, `https://host[:port]`. */
  registry: string;
  repository: string;
  scheme: 'basic' | 'bearer';
  /** For bearer: the token service the registry named. */
  realm?: string;
  service?: string;
  /**
   * For bearer: the scope the registry's challenge named (`repository:team/app:pull,push`),
   * or, when it named none, the one the token is asked for. The token request itself always
   * asks for `repository:<repository>:pull` or `…:pull,push`, what this client needs.
   */
  scope?: string;
}

/**
 * Asked for credentials when the registry answers 401, once per challenge (a token is kept
 * for the scope it was issued for). Return undefined for anonymous access.
 */
export type RegistryAuth = (
  challenge: AuthChallenge,
) => Promise<RegistryCredentials | undefined> | RegistryCredentials | undefined;

export interface OciClientOptions {
  /** The registry: `https://host[:port]`. No path, no userinfo. */
  url: string;
  repository: string;
  auth?: RegistryAuth;
  /** Allow `http://` (a registry on loopback, tests). Default false. */
  allowInsecureHttp?: boolean;
  /**
   * Milliseconds to wait for a response's headers, and then for each chunk of its body.
   * Default 15 000. A registry slower than this is treated as unreachable.
   */
  timeoutMs?: number;
  /** Largest manifest read, default 4 MiB (the distribution spec's own limit). */
  maxManifestBytes?: number;
  /** Largest page of a tag list read, default 8 MiB (a page of 1000 tags is about 130 KiB). */
  maxTagListBytes?: number;
  /** Replaces the global fetch (tests count or break requests this way). */
  fetch?: typeof globalThis.fetch;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  artifactType?: string;
}

export interface ImageManifest {
  schemaVersion: 2;
  mediaType: typeof OCI_MANIFEST;
  artifactType?: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

export interface FetchedManifest {
  manifest: ImageManifest;
  /** The manifest's own digest, checked against the bytes received. */
  digest: string;
  bytes: Buffer;
}

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
/** The OCI "empty" descriptor's content: `{}`. */
export const EMPTY_JSON = Buffer.from('{}');
export const EMPTY_JSON_MEDIA_TYPE = 'application/vnd.oci.empty.v1+json';

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT';

interface SendOptions {
  headers?: Record<string, string>;
  body?: Uint8Array;
  /** Statuses that are answers; anything else is an error. */
  ok: number[];
  push?: boolean;
  signal?: AbortSignal;
}

const MAX_REDIRECTS = 5;
// Every body this client reads has a bound, counted as it arrives: a registry (or anyone
// answering in its place) can send an endless body, and reading one whole would take the
// process's memory. Past a bound the body is cancelled, which closes the connection.
// Blobs are bounded by their caller's maxBytes, manifests by maxManifestBytes, tag list
// pages by maxTagListBytes, and these two:

/** A token service's answer: a JSON object holding a token (a few KiB in practice). */
const MAX_TOKEN_ANSWER_BYTES = 1024 * 1024;
/** What is read of an error answer: only its OCI error code is kept. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export function sha256Digest(data: Uint8Array): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/**
 * A client of the OCI distribution API for one repository: blobs (check, upload with
 * digest, download checked against its digest), manifests (put, get checked against the
 * digest), tags (listed page by page). Auth follows the registry's challenge: HTTP Basic, or
 * the bearer token flow (the token service is asked with the callback's credentials, and
 * the token kept per scope). Credentials go only into Authorization headers: never into
 * URLs, errors or events, and never to another origin after a redirect.
 */
export class OciClient {
  readonly registry: string;
  readonly repository: string;
  private readonly auth: RegistryAuth | undefined;
  private readonly timeoutMs: number;
  private readonly maxManifestBytes: number;
  private readonly maxTagListBytes: number;
  private readonly fetchImpl: typeof globalThis.fetch;
  /** Authorization header per scope ("pull" or "push"), once a challenge was answered. */
  private readonly authorization = new Map<'pull' | 'push', string>();

  constructor(options: OciClientOptions) {
    this.registry = checkRegistryUrl(options.url, options.allowInsecureHttp ?? false);
    this.repository = checkRepository(options.repository);
    this.auth = options.auth;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.maxManifestBytes = options.maxManifestBytes ?? 4 * 1024 * 1024;
    this.maxTagListBytes = options.maxTagListBytes ?? 8 * 1024 * 1024;
    this.fetchImpl = options.fetch ?? globalThis.fetch;
  }

  /** `registry/repository`, for messages and events. */
  get label(): string {
    return `${this.registry}/${this.repository}`;
  }

  async hasBlob(digest: string, signal?: AbortSignal): Promise<boolean> {
    const response = await this.send('HEAD', `blobs/${checkDigest(digest)}`, { ok: [200, 404], signal });
    await response.body?.cancel();
    return response.status === 200;
  }

  /** Uploads a blob unless the registry has it already. The registry checks the digest too. */
  async pushBlob(data: Uint8Array, signal?: AbortSignal): Promise<Descriptor & { uploaded: boolean }> {
    const digest = sha256Digest(data);
    const descriptor = { mediaType: 'application/octet-stream', digest, size: data.byteLength };
    if (await this.hasBlob(digest, signal)) return { ...descriptor, uploaded: false };
    const started = await this.send('POST', 'blobs/uploads/', {
      ok: [202],
      push: true,
      signal,
      headers: { 'content-length': '0' },
    });
    await started.body?.cancel();
    const location = started.headers.get('location');
    if (!location)
      throw new RegistryError('REGISTRY_HTTP', `${this.label}: the upload started without a Location`, { status: 202 });
    const target = new URL(location, `${this.registry}/`);
    if (target.origin !== this.registry) {
      throw new RegistryError('REGISTRY_HTTP', `${this.label}: the upload location is on another origin`, {
        status: 202,
      });
    }
    target.searchParams.set('digest', digest);
    const done = await this.sendUrl('PUT', target, {
      ok: [201],
      push: true,
      signal,
      body: data,
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(data.byteLength) },
    });
    await done.body?.cancel();
    return { ...descriptor, uploaded: true };
  }

  /**
   * Downloads a blob, refusing more than `maxBytes` and any content whose SHA-256 is not
   * `digest`.
   */
  async getBlob(digest: string, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.streamBlob(digest, maxBytes, signal)) chunks.push(chunk);
    return Buffer.concat(chunks);
  }

  /**
   * A blob's bytes as they arrive. The digest is checked when the body ends: the iteration
   * throws REGISTRY_DIGEST_MISMATCH instead of finishing, so a consumer that publishes only
   * after a complete iteration never publishes tampered content.
   */
  async *streamBlob(digest: string, maxBytes: number, signal?: AbortSignal): AsyncGenerator<Buffer> {
    checkDigest(digest);
    const response = await this.send('GET', `blobs/${digest}`, { ok: [200], signal });
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > maxBytes) {
      await response.body?.cancel();
      throw new RegistryError(
        'REGISTRY_TOO_LARGE',
        `${this.label}: blob ${digest} is ${declared} bytes, over the limit of ${maxBytes}`,
        { limit: maxBytes },
      );
    }
    const hash = createHash('sha256');
    let total = 0;
    for await (const chunk of this.readBody(response, `blob ${digest}`)) {
      total += chunk.length;
      if (total > maxBytes)
        throw new RegistryError(
          'REGISTRY_TOO_LARGE',
          `${this.label}: blob ${digest} is over the limit of ${maxBytes} bytes`,
          { limit: maxBytes },
        );
      hash.update(chunk);
      yield chunk;
    }
    const actual = `sha256:${hash.digest('hex')}`;
    if (actual !== digest) {
      throw new RegistryError(
        'REGISTRY_DIGEST_MISMATCH',
        `${this.label}: blob ${digest} arrived with content of digest ${actual}`,
      );
    }
  }

  /** Puts a manifest under a tag (or its digest). Returns the manifest's digest. */
  async putManifest(reference: string, manifest: ImageManifest, signal?: AbortSignal): Promise<string> {
    checkReference(reference);
    const bytes = Buffer.from(JSON.stringify(manifest));
    const digest = sha256Digest(bytes);
    if (isDigest(reference) && reference !== digest) {
      throw new RegistryError(
        'REGISTRY_DIGEST_MISMATCH',
        `${this.label}: manifest put under ${reference} has digest ${digest}`,
      );
    }
    const response = await this.send('PUT', `manifests/${reference}`, {
      ok: [201],
      push: true,
      signal,
      body: bytes,
      headers: { 'content-type': OCI_MANIFEST, 'content-length': String(bytes.byteLength) },
    });
    await response.body?.cancel();
    const told = response.headers.get('docker-content-digest');
    if (told && told !== digest)
      throw new RegistryError(
        'REGISTRY_DIGEST_MISMATCH',
        `${this.label}: the registry stored manifest ${digest} as ${told}`,
      );
    return digest;
  }

  /**
   * The manifest under a tag or digest, or undefined when there is none. Its digest is
   * computed from the bytes: it must equal the digest asked for, and the registry's
   * Docker-Content-Digest header when it sends one.
   */
  async getManifest(reference: string, signal?: AbortSignal): Promise<FetchedManifest | undefined> {
    checkReference(reference);
    const response = await this.send('GET', `manifests/${reference}`, {
      ok: [200, 404],
      signal,
      headers: { accept: OCI_MANIFEST },
    });
    if (response.status === 404) {
      await response.body?.cancel();
      return undefined;
    }
    const bytes = await this.readCapped(response, `manifest ${reference}`, this.maxManifestBytes);
    const digest = sha256Digest(bytes);
    const told = response.headers.get('docker-content-digest');
    if ((isDigest(reference) && digest !== reference) || (told && told !== digest)) {
      throw new RegistryError(
        'REGISTRY_DIGEST_MISMATCH',
        `${this.label}: manifest ${reference} arrived with content of digest ${digest}`,
      );
    }
    return { manifest: parseManifest(bytes, `${this.label}: manifest ${reference}`), digest, bytes };
  }

  /** Every tag of the repository (all pages); none when the repository does not exist yet. */
  async listTags(signal?: AbortSignal): Promise<string[]> {
    const tags: string[] = [];
    let next: URL | undefined = new URL(`${this.registry}/v2/${this.repository}/tags/list?n=1000`);
    for (let page = 0; next && page < 10_000; page++) {
      const response = await this.sendUrl('GET', next, { ok: [200, 404], signal });
      if (response.status === 404) {
        await response.body?.cancel();
        return tags;
      }
      const text = (await this.readCapped(response, 'tag list', this.maxTagListBytes)).toString('utf8');
      let body: { tags?: unknown };
      try {
        body = JSON.parse(text) as { tags?: unknown };
      } catch (error) {
        throw new RegistryError('REGISTRY_HTTP', `${this.label}: the tag list is not JSON`, {
          status: 200,
          cause: error,
        });
      }
      if (body.tags !== null && body.tags !== undefined) {
        if (!Array.isArray(body.tags) || body.tags.some((tag) => typeof tag !== 'string')) {
          throw new RegistryError('REGISTRY_HTTP', `${this.label}: the tag list has no list of tags`, { status: 200 });
        }
        tags.push(...(body.tags as string[]));
      }
      next = nextPage(response.headers.get('link'), this.registry);
    }
    return tags;
  }

  private send(method: Method, path: string, options: SendOptions): Promise<Response> {
    return this.sendUrl(method, new URL(`${this.registry}/v2/${this.repository}/${path}`), options);
  }

  /**
   * One request, with redirects followed by hand (Authorization dropped on another origin,
   * never downgraded to http) and one retry after a 401 with credentials for the challenge.
   */
  private async sendUrl(method: Method, url: URL, options: SendOptions): Promise<Response> {
    const scope = options.push ? 'push' : 'pull';
    let { response, answeredBy } = await this.exchange(method, url, options, this.authorization.get(scope));
    // Only the registry's own 401 and 403 speak about our credentials. One from another
    // origin at the end of a redirect (a blob store) is that origin's business: its
    // challenge must never reach the callback, nor make us send the user's password to a
    // token service it names.
    if (response.status === 401 && answeredBy === this.registry) {
      const challenge = response.headers.get('www-authenticate');
      await response.body?.cancel();
      const header = await this.answer(challenge, scope, options.signal);
      if (header === undefined) throw this.authError(method, url, 401);
      this.authorization.set(scope, header);
      ({ response, answeredBy } = await this.exchange(method, url, options, header));
      if (response.status === 401 && answeredBy === this.registry) {
        await response.body?.cancel();
        this.authorization.delete(scope);
        throw this.authError(method, url, 401);
      }
    }
    if (response.status === 403 && answeredBy === this.registry) {
      await response.body?.cancel();
      throw this.authError(method, url, 403);
    }
    if (!options.ok.includes(response.status)) throw await this.statusError(method, url, response);
    return response;
  }

  /** Sends the request and follows redirects; `answeredBy` is the origin of the final response. */
  private async exchange(
    method: Method,
    url: URL,
    options: SendOptions,
    authorization: string | undefined,
  ): Promise<{ response: Response; answeredBy: string }> {
    let target = url;
    for (let hop = 0; ; hop++) {
      const headers: Record<string, string> = { 'user-agent': 'agentproto', ...options.headers };
      if (authorization !== undefined && target.origin === this.registry) headers.authorization = authorization;
      const response = await this.fetchWithTimeout(method, target, headers, options.body, options.signal);
      const location = response.headers.get('location');
      if (![301, 302, 303, 307, 308].includes(response.status) || !location || method === 'POST' || method === 'PUT')
        return { response, answeredBy: target.origin };
      await response.body?.cancel();
      if (hop >= MAX_REDIRECTS)
        throw new RegistryError('REGISTRY_HTTP', `${this.label}: ${method} ${target.pathname}: too many redirects`, {
          status: response.status,
        });
      const next = new URL(location, target);
      if (next.protocol !== 'https:' && !(next.protocol === 'http:' && target.protocol === 'http:')) {
        throw new RegistryError(
          'REGISTRY_HTTP',
          `${this.label}: ${method} ${target.pathname}: refused a redirect to ${next.protocol}`,
          { status: response.status },
        );
      }
      target = next;
    }
  }

  private async fetchWithTimeout(
    method: Method,
    url: URL,
    headers: Record<string, string>,
    body: Uint8Array | undefined,
    signal?: AbortSignal,
  ): Promise<Response> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const combined = signal ? eitherSignal(signal, timeout) : timeout;
    try {
      return await this.fetchImpl(url, { method, headers, body, redirect: 'manual', signal: combined });
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      const why = timeout.aborted ? `no answer within ${this.timeoutMs} ms` : describeNetworkError(error);
      throw new RegistryError('REGISTRY_UNREACHABLE', `${this.registry}: ${method} ${url.pathname}: ${why}`, {
        cause: error,
      });
    }
  }

  /**
   * A whole response body of at most `limit` bytes. A larger one is refused (REGISTRY_TOO_LARGE,
   * naming the limit) as soon as its Content-Length says so or its bytes pass the limit, or,
   * with `truncate`, cut at the limit; either way nothing more is read, and leaving readBody
   * cancels the body, which closes the connection.
   */
  private async readCapped(
    response: Response,
    what: string,
    limit: number,
    over: 'refuse' | 'truncate' = 'refuse',
  ): Promise<Buffer> {
    const tooLarge = () =>
      new RegistryError('REGISTRY_TOO_LARGE', `${this.label}: ${what} is over the limit of ${limit} bytes`, {
        status: response.status,
        limit,
      });
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (over === 'refuse' && declared > limit) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of this.readBody(response, what)) {
      if (total + chunk.length > limit) {
        if (over === 'refuse') throw tooLarge();
        chunks.push(chunk.subarray(0, limit - total));
        break;
      }
      total += chunk.length;
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  }

  /** A response body, chunk by chunk, failing as unreachable when a chunk takes longer than the timeout. */
  private async *readBody(response: Response, what: string): AsyncGenerator<Buffer> {
    if (!response.body) return;
    const reader = response.body.getReader();
    try {
      for (;;) {
        let timer: NodeJS.Timeout | undefined;
        const stalled = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new RegistryError(
                  'REGISTRY_UNREACHABLE',
                  `${this.label}: ${what}: the body stalled for ${this.timeoutMs} ms`,
                ),
              ),
            this.timeoutMs,
          );
        });
        let step: { done: true; value?: undefined } | { done: false; value: Uint8Array };
        try {
          step = await Promise.race([reader.read(), stalled]);
        } catch (error) {
          if (error instanceof RegistryError) throw error;
          throw new RegistryError(
            'REGISTRY_UNREACHABLE',
            `${this.label}: ${what}: the connection broke (${describeNetworkError(error)})`,
            { cause: error },
          );
        } finally {
          clearTimeout(timer);
        }
        if (step.done) return;
        yield Buffer.from(step.value.buffer, step.value.byteOffset, step.value.byteLength);
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }

  /** The Authorization header for a challenge, or undefined when the callback has nothing. */
  private async answer(
    challengeHeader: string | null,
    scope: 'pull' | 'push',
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    const challenge = parseChallenge(challengeHeader);
    if (!challenge || !this.auth) return undefined;
    const wanted = `repository:${this.repository}:${scope === 'push' ? 'pull,push' : 'pull'}`;
    const credentials = await this.auth({
      registry: this.registry,
      repository: this.repository,
      scheme: challenge.scheme,
      ...(challenge.scheme === 'bearer'
        ? { realm: challenge.realm, service: challenge.service, scope: challenge.scope ?? wanted }
        : {}),
    });
    if (!credentials) return undefined;
    if (challenge.scheme === 'basic') {
      if (!('username' in credentials)) return undefined;
      return basicHeader(credentials);
    }
    if ('token' in credentials) return `Bearer ${credentials.token}`;
    return `Bearer ${await this.requestToken(challenge, wanted, credentials, signal)}`;
  }

  /** The bearer token flow: GET realm?service=…&scope=… with Basic credentials. */
  private async requestToken(
    challenge: Challenge,
    scope: string,
    credentials: { username: string; password: string },
    signal?: AbortSignal,
  ): Promise<string> {
    let realm: URL;
    try {
      realm = new URL(challenge.realm ?? '');
    } catch {
      throw new RegistryError('REGISTRY_AUTH', `${this.label}: the bearer challenge has no usable realm`);
    }
    if (realm.protocol !== 'https:' && !(realm.protocol === 'http:' && this.registry.startsWith('http:'))) {
      throw new RegistryError(
        'REGISTRY_AUTH',
        `${this.label}: refused to send credentials to a ${realm.protocol} token service`,
      );
    }
    if (realm.username || realm.password)
      throw new RegistryError('REGISTRY_AUTH', `${this.label}: the token realm holds userinfo`);
    if (challenge.service) realm.searchParams.set('service', challenge.service);
    realm.searchParams.set('scope', scope);
    const response = await this.fetchWithTimeout(
      'GET',
      realm,
      { 'user-agent': 'agentproto', authorization: basicHeader(credentials) },
      undefined,
      signal,
    );
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new RegistryError(
        'REGISTRY_AUTH',
        `${this.label}: the token service ${realm.origin} answered ${response.status}`,
        { status: response.status },
      );
    }
    const text = (
      await this.readCapped(response, `the token service ${realm.origin}'s answer`, MAX_TOKEN_ANSWER_BYTES)
    ).toString('utf8');
    let body: { token?: unknown; access_token?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new RegistryError('REGISTRY_AUTH', `${this.label}: the token service answered something that is not JSON`);
    }
    const token = typeof body.token === 'string' ? body.token : body.access_token;
    if (typeof token !== 'string' || token.length === 0 || /[\r\n]/.test(token)) {
      throw new RegistryError('REGISTRY_AUTH', `${this.label}: the token service answered without a token`);
    }
    return token;
  }

  private authError(method: Method, url: URL, status: number): RegistryError {
    const what = status === 401 ? 'not authenticated (check the registry credentials)' : 'access denied';
    return new RegistryError('REGISTRY_AUTH', `${this.label}: ${method} ${url.pathname}: ${what}`, { status });
  }

  private async statusError(method: Method, url: URL, response: Response): Promise<RegistryError> {
    let registryCode: string | undefined;
    try {
      const text = (await this.readCapped(response, 'error', MAX_ERROR_BODY_BYTES, 'truncate')).toString('utf8');
      const code = (JSON.parse(text) as { errors?: { code?: unknown }[] }).errors?.[0]?.code;
      if (typeof code === 'string' && /^[A-Z_]{1,64}$/.test(code)) registryCode = code;
    } catch {
      // No OCI error body: the status says enough.
    }
    const suffix = registryCode ? ` (${registryCode})` : '';
    const code = response.status >= 500 ? 'REGISTRY_UNREACHABLE' : 'REGISTRY_HTTP';
    return new RegistryError(code, `${this.label}: ${method} ${url.pathname}: HTTP ${response.status}${suffix}`, {
      status: response.status,
      registryCode,
    });
  }
}

/** A parsed `WWW-Authenticate` challenge: the scheme and the parameters the registry named. */
export interface Challenge {
  scheme: 'basic' | 'bearer';
  realm?: string;
  service?: string;
  scope?: string;
}

/** `Basic realm="…"` or `Bearer realm="…",service="…",scope="…"`. */
export function parseChallenge(header: string | null): Challenge | undefined {
  if (typeof header !== 'string' || !header) return undefined;
  const match = /^\s*(Basic|Bearer)\b(.*)$/i.exec(header);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  for (const part of match[2]!.matchAll(/([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g)) {
    params[part[1]!.toLowerCase()] = (part[2] ?? part[3] ?? '').replace(/\\(.)/g, '$1');
  }
  const scheme = match[1]!.toLowerCase() as 'basic' | 'bearer';
  return scheme === 'basic'
    ? { scheme }
    : { scheme, realm: params.realm, service: params.service, scope: params.scope };
}

/** Aborted when either is (AbortSignal.any, which needs Node 20.3). */
function eitherSignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  if (a.aborted) return a;
  if (b.aborted) return b;
  const controller = new AbortController();
  const onAbort = (event: Event) => {
    a.removeEventListener('abort', onAbort);
    b.removeEventListener('abort', onAbort);
    controller.abort((event.target as AbortSignal).reason);
  };
  a.addEventListener('abort', onAbort);
  b.addEventListener('abort', onAbort);
  return controller.signal;
}

function basicHeader(credentials: { username: string; password: string }): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
}

function checkRegistryUrl(text: string, allowInsecureHttp: boolean): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RegistryError('REGISTRY_INVALID', 'the registry URL is not a URL');
  }
  if (url.username || url.password)
    throw new RegistryError('REGISTRY_INVALID', 'the registry URL holds credentials; pass them through `auth`');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowInsecureHttp)) {
    throw new RegistryError('REGISTRY_INVALID', `${url.protocol}// registries need allowInsecureHttp`);
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    throw new RegistryError(
      'REGISTRY_INVALID',
      `${url.origin}: give the registry origin only, without a path or query`,
    );
  }
  return url.origin;
}

function checkDigest(digest: string): string {
  if (!isDigest(digest))
    throw new RegistryError('REGISTRY_INVALID', `${JSON.stringify(shown(digest))} is not a sha256 digest`);
  return digest;
}

/** `<…/tags/list?n=…&last=…>; rel="next"`, on the registry's own origin only. */
function nextPage(link: string | null, registry: string): URL | undefined {
  const match = link && /<([^>]+)>\s*;\s*rel="?next"?/.exec(link);
  if (!match) return undefined;
  const next = new URL(match[1]!, `${registry}/`);
  return next.origin === registry ? next : undefined;
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = cause && typeof cause.code === 'string' ? cause.code : undefined;
  return code ?? 'the connection failed';
}

function parseManifest(bytes: Buffer, what: string): ImageManifest {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new RegistryError('REGISTRY_BAD_ARTIFACT', `${what} is not JSON`, { cause: error });
  }
  const manifest = value as Partial<ImageManifest>;
  const bad = (why: string) => new RegistryError('REGISTRY_BAD_ARTIFACT', `${what}: ${why}`);
  if (typeof value !== 'object' || value === null || manifest.schemaVersion !== 2)
    throw bad('not an OCI image manifest (schemaVersion 2)');
  if (manifest.mediaType !== undefined && manifest.mediaType !== OCI_MANIFEST)
    throw bad(`media type ${JSON.stringify(manifest.mediaType)} is not ${OCI_MANIFEST}`);
  checkDescriptor(manifest.config, bad, 'config');
  if (!Array.isArray(manifest.layers)) throw bad('no layers list');
  for (const [i, layer] of manifest.layers.entries()) checkDescriptor(layer, bad, `layers[${i}]`);
  return manifest as ImageManifest;
}

function checkDescriptor(value: unknown, bad: (why: string) => RegistryError, where: string): void {
  const d = value as Partial<Descriptor> | undefined;
  if (typeof d !== 'object' || d === null) throw bad(`${where} is missing`);
  if (typeof d.mediaType !== 'string') throw bad(`${where} has no media type`);
  if (typeof d.digest !== 'string' || !isDigest(d.digest)) throw bad(`${where} has no sha256 digest`);
  if (typeof d.size !== 'number' || !Number.isSafeInteger(d.size) || d.size < 0)
    throw bad(`${where} has no valid size`);
}
