import { X509Certificate, createPrivateKey, randomUUID, sign, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { listenOnLoopback } from './free-port.js';
import { join } from 'node:path';
import { acceptedCredential, parseBasicAuthorization } from './http-auth.js';
import { run } from './run.js';
import { tempDir } from './temp-dir.js';

/** What a registry token grants on a repository. */
export type RegistryAction = 'pull' | 'push';

/**
 * An account of the token service: a password alone grants pull and push on every
 * repository; `{ password, actions: ['pull'] }` makes a read-only account.
 */
export type RegistryUser = string | { password: string; actions?: readonly RegistryAction[] };

export interface RegistryTokenServerOptions {
  /** User name → account. */
  users: Record<string, RegistryUser>;
  /** The registry's name for itself: the token's `aud`, and the `service` of its challenge. */
  service: string;
  /** The token's `iss`; the registry accepts tokens from this issuer only. */
  issuer: string;
  /** Seconds a token is valid; default 300. */
  expiresInSeconds?: number;
}

/** One token request. The password is never recorded. */
export interface TokenRequestLogEntry {
  /** The user name of the Basic credential sent, or undefined when none came. */
  user: string | undefined;
  /** The `scope` parameters, space-separated, as asked (`repository:team/app:pull,push`). */
  scope: string;
  service: string | undefined;
  status: number;
}

export interface RegistryTokenServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  /** `${url}/token`: what the registry names as `realm` in its challenge. */
  realm: string;
  service: string;
  issuer: string;
  /** The PEM certificate of the signing key, for the registry's `rootcertbundle`. */
  certPath: string;
  /** Live counters: the same object is updated in place. */
  readonly requests: { count: number; log: TokenRequestLogEntry[] };
  /** The top-level `auth:` YAML block that points a registry at this server (for startOciRegistry's extraConfig). */
  registryConfig(): string;
  close(): Promise<void>;
}

/**
 * The token service of the Docker/OCI bearer flow, as CNCF distribution 2.8 (`auth: token`)
 * verifies it: GET /token?service=…&scope=… with HTTP Basic answers a JWT signed RS256,
 * whose `x5c` header holds the signing certificate, a self-signed one made by `openssl`
 * that the registry trusts through `rootcertbundle`. The token grants each scope's actions
 * that the account allows, and nothing else; asking for more is not an error (the registry
 * then refuses the request), exactly as Docker Hub and Harbor behave.
 */
export async function startRegistryTokenServer(options: RegistryTokenServerOptions): Promise<RegistryTokenServer> {
  const dir = await tempDir('testkit-token-');
  const signer = await makeSigningCertificate(dir.path).catch(async (error: unknown) => {
    await dir.cleanup();
    throw error;
  });
  const expiresIn = options.expiresInSeconds ?? 300;
  const requests = { count: 0, log: [] as TokenRequestLogEntry[] };
  const server = createServer((req, res) => {
    req.resume();
    const target = new URL(`http://127.0.0.1${req.url?.startsWith('/') ? req.url : '/'}`);
    const scopes = target.searchParams
      .getAll('scope')
      .flatMap((scope) => scope.split(' '))
      .filter(Boolean);
    const service = target.searchParams.get('service') ?? undefined;
    const entry: TokenRequestLogEntry = {
      user: parseBasicAuthorization(req.headers.authorization)?.username,
      scope: scopes.join(' '),
      service,
      status: 0,
    };
    requests.count += 1;
    requests.log.push(entry);
    const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      entry.status = status;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (target.pathname !== '/token' || req.method !== 'GET')
      return reply(404, { details: 'only GET /token is served' });
    if (service !== undefined && service !== options.service) return reply(400, { details: 'unknown service' });
    const account = findAccount(options.users, req.headers.authorization);
    if (!account)
      return reply(401, { details: 'incorrect username or password' }, { 'www-authenticate': 'Basic realm="token"' });
    const now = Math.floor(Date.now() / 1000);
    const token = signJwt(signer, {
      iss: options.issuer,
      sub: account.user,
      aud: options.service,
      exp: now + expiresIn,
      // A second of slack: the registry compares with its own clock.
      nbf: now - 1,
      iat: now,
      jti: randomUUID(),
      access: scopes.flatMap((scope) => grant(scope, account.actions)),
    });
    reply(200, { token, access_token: token, expires_in: expiresIn, issued_at: new Date(now * 1000).toISOString() });
  });
  const port = await listenOnLoopback(server);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    realm: `${url}/token`,
    service: options.service,
    issuer: options.issuer,
    certPath: signer.certPath,
    requests,
    registryConfig: () =>
      [
        'auth:',
        '  token:',
        `    realm: ${JSON.stringify(`${url}/token`)}`,
        `    service: ${JSON.stringify(options.service)}`,
        `    issuer: ${JSON.stringify(options.issuer)}`,
        `    rootcertbundle: ${JSON.stringify(signer.certPath)}`,
      ].join('\n'),
    async close() {
      await closeServer(server);
      await dir.cleanup();
    },
  };
}

interface Signer {
  key: KeyObject;
  /** base64 DER, as the JWS `x5c` header wants it (standard base64, not base64url). */
  certificateDer: string;
  certPath: string;
}

async function makeSigningCertificate(dir: string): Promise<Signer> {
  const keyPath = join(dir, 'token-key.pem');
  const certPath = join(dir, 'token-cert.pem');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=testkit',
    '-days',
    '2',
    '-keyout',
    keyPath,
    '-out',
    certPath,
  ]);
  const [keyPem, certPem] = await Promise.all([readFile(keyPath, 'utf8'), readFile(certPath, 'utf8')]);
  return {
    key: createPrivateKey(keyPem),
    certificateDer: new X509Certificate(certPem).raw.toString('base64'),
    certPath,
  };
}

function signJwt(signer: Signer, claims: Record<string, unknown>): string {
  const header = { typ: 'JWT', alg: 'RS256', x5c: [signer.certificateDer] };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  // RS256 is RSASSA-PKCS1-v1_5 with SHA-256: node's default padding for an RSA key.
  return `${input}.${base64url(sign('sha256', Buffer.from(input), signer.key))}`;
}

function base64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

function findAccount(
  users: Record<string, RegistryUser>,
  authorization: string | undefined,
): { user: string; actions: readonly RegistryAction[] } | undefined {
  const presented = parseBasicAuthorization(authorization);
  if (!presented || !Object.hasOwn(users, presented.username)) return undefined;
  const account = users[presented.username]!;
  const password = typeof account === 'string' ? account : account.password;
  if (!acceptedCredential({ username: presented.username, password }, authorization)) return undefined;
  return {
    user: presented.username,
    actions: typeof account === 'string' ? ['pull', 'push'] : (account.actions ?? ['pull', 'push']),
  };
}

/** `repository:<name>:<actions>` → the access entry the account allows; other resource types get nothing. */
function grant(scope: string, allowed: readonly RegistryAction[]): { type: string; name: string; actions: string[] }[] {
  const first = scope.indexOf(':');
  const last = scope.lastIndexOf(':');
  if (first < 0 || last <= first) return [];
  const type = scope.slice(0, first);
  const name = scope.slice(first + 1, last);
  const actions = scope
    .slice(last + 1)
    .split(',')
    .filter((action): action is RegistryAction => (allowed as readonly string[]).includes(action));
  return type === 'repository' && name !== '' ? [{ type, name, actions: [...new Set(actions)] }] : [];
}

export interface BasicAuthProxyOptions {
  /** The registry to front: `http://127.0.0.1:PORT`. */
  target: string;
  /** User name → password. */
  users: Record<string, string>;
}

/** One request as the proxy saw it. Only the user name of a credential is recorded. */
export interface ProxyRequestLogEntry {
  method: string;
  path: string;
  /** Raw query string without `?`. */
  query: string;
  user: string | undefined;
  /** The status sent back; 0 until the response head is written. */
  status: number;
}

/** A server on another origin that answers every request one chosen way and records what it received. */
export interface HeaderRecorder {
  /** `http://127.0.0.1:PORT` */
  url: string;
  readonly received: { method: string; path: string; headers: IncomingHttpHeaders }[];
  /** What to answer from now on; default 200 with a body that is no registry's blob. */
  answerWith(answer: { status: number; headers?: Record<string, string>; body?: string }): void;
  close(): Promise<void>;
}

export interface BasicAuthProxy {
  /** `http://127.0.0.1:PORT`: use it as the registry URL. */
  url: string;
  /** Live counters: the same object is updated in place. */
  readonly requests: { count: number; log: ProxyRequestLogEntry[] };
  /**
   * Answers authenticated requests for exactly `path` with a 307 to the same path on
   * `elsewhere` (as a registry redirects blob reads to object storage); undefined stops it.
   */
  redirectElsewhere(path: string | undefined): void;
  /** The other origin that redirected requests land on. */
  readonly elsewhere: HeaderRecorder;
  /** Closes the proxy and `elsewhere`. */
  close(): Promise<void>;
}

/** Headers that describe one connection, not the message: never forwarded by a proxy (RFC 9110 7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * A registry behind an HTTP Basic reverse proxy, the common self-hosted deployment (nginx
 * `auth_basic` in front of distribution). Without a valid credential it answers 401 with
 * `WWW-Authenticate: Basic realm="registry"`; otherwise it forwards method, path, query,
 * headers (without Authorization) and both bodies as streams, and rewrites a `Location`
 * on the registry's origin to its own, so upload sessions stay on the proxy.
 */
export async function startBasicAuthProxy(options: BasicAuthProxyOptions): Promise<BasicAuthProxy> {
  const target = new URL(options.target);
  const requests = { count: 0, log: [] as ProxyRequestLogEntry[] };
  let redirectPath: string | undefined;
  const elsewhere = await startHeaderRecorder();
  let ownOrigin = '';
  const server = createServer((req, res) => {
    const url = new URL(`http://127.0.0.1${req.url?.startsWith('/') ? req.url : '/'}`);
    const entry: ProxyRequestLogEntry = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.search.replace(/^\?/, ''),
      user: undefined,
      status: 0,
    };
    requests.count += 1;
    requests.log.push(entry);
    const presented = parseBasicAuthorization(req.headers.authorization);
    const password =
      presented && Object.hasOwn(options.users, presented.username) ? options.users[presented.username]! : undefined;
    if (
      !presented ||
      password === undefined ||
      !acceptedCredential({ username: presented.username, password }, req.headers.authorization)
    ) {
      // Drain the body so the client reads the 401 instead of a reset connection.
      req.resume();
      entry.status = 401;
      res.writeHead(401, { 'www-authenticate': 'Basic realm="registry"', 'content-type': 'text/plain' });
      res.end('authentication required\n');
      return;
    }
    entry.user = presented.username;
    if (
      redirectPath !== undefined &&
      url.pathname === redirectPath &&
      (req.method === 'GET' || req.method === 'HEAD')
    ) {
      req.resume();
      entry.status = 307;
      res.writeHead(307, { location: `${elsewhere.url}${url.pathname}${url.search}` });
      res.end();
      return;
    }
    forward(req, res, target, ownOrigin, entry);
  });
  const port = await listenOnLoopback(server);
  ownOrigin = `http://127.0.0.1:${port}`;
  return {
    url: ownOrigin,
    requests,
    redirectElsewhere(path) {
      redirectPath = path;
    },
    elsewhere,
    async close() {
      await Promise.all([closeServer(server), elsewhere.close()]);
    },
  };
}

function forward(
  req: IncomingMessage,
  res: ServerResponse,
  target: URL,
  ownOrigin: string,
  entry: ProxyRequestLogEntry,
): void {
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) {
    // The proxy's credential is for the proxy: the registry behind it never sees it.
    if (!HOP_BY_HOP.has(name) && name !== 'authorization' && name !== 'host') headers[name] = value;
  }
  headers.host = target.host;
  const upstream = httpRequest(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
    (answer) => {
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
      }
      if (typeof out.location === 'string') {
        const location = new URL(out.location, target);
        if (location.origin === target.origin) out.location = `${ownOrigin}${location.pathname}${location.search}`;
      }
      entry.status = answer.statusCode ?? 502;
      res.writeHead(entry.status, out);
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    },
  );
  upstream.on('error', () => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    entry.status = 502;
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end('the registry behind the proxy did not answer\n');
  });
  req.pipe(upstream);
}

/** The other origin of a cross-origin redirect: records each request's headers, answers as told. */
async function startHeaderRecorder(): Promise<HeaderRecorder> {
  const received: HeaderRecorder['received'] = [];
  let answer: { status: number; headers?: Record<string, string>; body?: string } = {
    status: 200,
    body: 'not the blob that was asked for\n',
  };
  const server = createServer((req, res) => {
    req.resume();
    received.push({
      method: req.method ?? 'GET',
      path: new URL(`http://127.0.0.1${req.url ?? '/'}`).pathname,
      headers: { ...req.headers },
    });
    res.writeHead(answer.status, { 'content-type': 'application/octet-stream', ...answer.headers });
    res.end(req.method === 'HEAD' ? undefined : answer.body);
  });
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answerWith(next) {
      answer = next;
    },
    close: () => closeServer(server),
  };
}

/** Stops listening and drops kept-alive connections, which would otherwise hold close() open. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
