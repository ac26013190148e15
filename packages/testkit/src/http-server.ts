import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './free-port.js';
import { constants as zlibConstants, gunzipSync } from 'node:zlib';
import { acceptedCredential, parseBasicAuthorization, type BasicAuth, type BasicCredential } from './http-auth.js';
import { MAX_CGI_HEAD_BYTES, parseCgiHead } from './cgi-response.js';

export interface GitHttpServerOptions {
  /** Folder whose bare repositories are served: `<url>/<name>` is `<root>/<name>`. */
  root: string;
  /** Require HTTP Basic auth; without it every request is served. */
  auth?: BasicAuth;
  /**
   * A careless server, for redaction tests: a refused request (no or wrong credentials) is
   * answered with `status` (401 by default; git prints the body of a 403 or 500, not of a
   * 401) and a text/plain body made by `text` from what the client sent, which is also sent
   * back in an `X-Echo` response header (line breaks as ` | `, non-ASCII percent-encoded).
   */
  echoCredentials?: EchoCredentials;
}

/** What a careless server says back about the credential it refused (see echoCredentials). */
interface EchoCredentials {
  status?: number;
  text: (sent: SentCredential) => string;
}

/** The credential of a request as the server saw it: the header, and for Basic its decoded parts. */
interface SentCredential {
  authorization: string | undefined;
  user?: string;
  password?: string;
}

/** One request as the server saw it. Entries are appended when a request arrives and updated as it is answered. */
export interface GitHttpRequestLogEntry {
  method: string;
  /** Decoded path, e.g. `/skills.git/git-upload-pack`. */
  path: string;
  /** Raw query string without `?`, e.g. `service=git-upload-pack`. */
  query: string;
  /** HTTP status sent; 0 until the response head is written. */
  status: number;
  /** Response body bytes sent so far. */
  bytes: number;
  /** The request's `Git-Protocol` header (`version=2` for protocol v2 clients). */
  gitProtocol: string | undefined;
  /** The request's `Content-Encoding` header (`gzip` for large git POSTs). */
  contentEncoding: string | undefined;
  /** What git http-backend printed on stderr, when the server answered 5xx. */
  error?: string;
  /**
   * The protocol v2 command a POST asked for (`ls-refs` lists refs, `fetch` sends objects),
   * read from the start of its body once the body has arrived; undefined for GETs and v0.
   */
  command?: string;
  /**
   * The `filter` of a v2 `fetch` (`blob:none`, `tree:0`, ...) when the client sent one in
   * the first 16 KiB of its body: what the client asked to be left out.
   */
  filter?: string;
}

export interface GitHttpStats {
  /** Requests received, including rejected ones (401, 403). */
  requests: number;
  /** Response body bytes sent, over all requests (headers not counted). */
  bytesServed: number;
  log: GitHttpRequestLogEntry[];
}

export interface GitHttpServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  port: number;
  /** `${url}/${repoName}` */
  urlFor(repoName: string): string;
  /** Live counters: the same object is updated in place, also by resetStats(). */
  readonly stats: GitHttpStats;
  resetStats(): void;
  /** Kills running git http-backend processes, drops open connections and stops listening. */
  close(): Promise<void>;
}

/**
 * Smart-HTTP git server on 127.0.0.1 (a port the OS picks): Node's http server in front of
 * `git http-backend`, run as a CGI program per request, exactly as Apache or nginx would.
 * Serves clone, fetch and ls-remote with protocol v0/v1/v2. Read-only: receive-pack is
 * switched off (http-backend would otherwise allow pushes from any authenticated user).
 */
export async function startGitHttpServer(options: GitHttpServerOptions): Promise<GitHttpServer> {
  const stats: GitHttpStats = { requests: 0, bytesServed: 0, log: [] };
  const children = new Set<ChildProcessWithoutNullStreams>();
  const server = createServer((req, res) => {
    const entry = logRequest(stats, req);
    const credential = options.auth
      ? authorize(options.auth, req, res, stats, entry, options.echoCredentials)
      : undefined;
    if (options.auth && !credential) return;
    if (!isSafePath(entry.path)) {
      req.resume();
      sendText(res, stats, entry, 403, 'path escapes the served root\n');
      return;
    }
    const child = spawnHttpBackend(options.root, req, entry, credential?.username);
    children.add(child);
    child.on('close', () => children.delete(child));
    relayCgi(child, req, res, stats, entry);
  });
  const port = await listenOnLoopback(server);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    urlFor: (repoName) => `${url}/${repoName.replace(/^\/+/, '')}`,
    stats,
    resetStats() {
      stats.requests = 0;
      stats.bytesServed = 0;
      stats.log.length = 0;
    },
    close: () => closeServer(server, children),
  };
}

function logRequest(stats: GitHttpStats, req: IncomingMessage): GitHttpRequestLogEntry {
  // Concatenated, not resolved against a base: `//x/y` must stay a path, not become host x.
  const target = new URL(`http://127.0.0.1${req.url?.startsWith('/') ? req.url : '/'}`);
  const entry: GitHttpRequestLogEntry = {
    method: req.method ?? 'GET',
    path: safeDecode(target.pathname),
    query: target.search.replace(/^\?/, ''),
    status: 0,
    bytes: 0,
    gitProtocol: headerValue(req, 'git-protocol'),
    contentEncoding: headerValue(req, 'content-encoding'),
  };
  stats.requests += 1;
  stats.log.push(entry);
  return entry;
}

/** The accepted credential, or undefined after answering 401. The predicate form is called once per request. */
function authorize(
  auth: BasicAuth,
  req: IncomingMessage,
  res: ServerResponse,
  stats: GitHttpStats,
  entry: GitHttpRequestLogEntry,
  echo: EchoCredentials | undefined,
): BasicCredential | undefined {
  const credential = acceptedCredential(auth, req.headers.authorization);
  if (credential) return credential;
  // Drain the body so the client reads our 401 instead of a reset connection.
  req.resume();
  res.setHeader('WWW-Authenticate', 'Basic realm="git"');
  if (echo) {
    const basic = parseBasicAuthorization(req.headers.authorization);
    const sent: SentCredential = {
      authorization: req.headers.authorization,
      ...(basic ? { user: basic.username, password: basic.password } : {}),
    };
    const text = echo.text(sent);
    res.setHeader(
      'X-Echo',
      text.replace(/\r?\n/g, ' | ').replace(/[^\x20-\x7e]/g, (character) => encodeURIComponent(character)),
    );
    sendText(res, stats, entry, echo.status ?? 401, `${text}\n`);
    return undefined;
  }
  sendText(res, stats, entry, 401, 'authentication required\n');
  return undefined;
}

// http-backend refuses `..` itself; refusing here too keeps the guarantee independent of the git version.
function isSafePath(path: string): boolean {
  return path.startsWith('/') && !path.includes('\0') && !path.split('/').includes('..');
}

function spawnHttpBackend(
  root: string,
  req: IncomingMessage,
  entry: GitHttpRequestLogEntry,
  remoteUser: string | undefined,
): ChildProcessWithoutNullStreams {
  // A CGI program gets a clean environment, not the test runner's (no GIT_DIR, no user config).
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    // Config from the environment outranks the repository's: no push, whatever the fixture says.
    // Partial clone and wants by object id are on, as on the hosted services clients meet
    // (GitHub, GitLab): `--filter=blob:none` and fetching blobs by id both depend on them.
    GIT_CONFIG_COUNT: '3',
    GIT_CONFIG_KEY_0: 'http.receivepack',
    GIT_CONFIG_VALUE_0: 'false',
    GIT_CONFIG_KEY_1: 'uploadpack.allowFilter',
    GIT_CONFIG_VALUE_1: 'true',
    GIT_CONFIG_KEY_2: 'uploadpack.allowAnySHA1InWant',
    GIT_CONFIG_VALUE_2: 'true',
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    REQUEST_METHOD: entry.method,
    PATH_INFO: entry.path,
    QUERY_STRING: entry.query,
    REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
  };
  const contentType = headerValue(req, 'content-type');
  if (contentType) env.CONTENT_TYPE = contentType;
  // Chunked uploads have no length; http-backend then reads the body until EOF.
  const contentLength = headerValue(req, 'content-length');
  if (contentLength) env.CONTENT_LENGTH = contentLength;
  // http-backend inflates gzip bodies itself when told the encoding (git gzips POSTs over 1 KiB).
  if (entry.contentEncoding) env.HTTP_CONTENT_ENCODING = entry.contentEncoding;
  // Protocol v2 is negotiated through this header; http-backend hands GIT_PROTOCOL to upload-pack.
  if (entry.gitProtocol) {
    env.GIT_PROTOCOL = entry.gitProtocol;
    env.HTTP_GIT_PROTOCOL = entry.gitProtocol;
  }
  if (remoteUser !== undefined) env.REMOTE_USER = remoteUser;
  return spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Feeds the request body to the CGI child and turns its output into the HTTP response. */
function relayCgi(
  child: ChildProcessWithoutNullStreams,
  req: IncomingMessage,
  res: ServerResponse,
  stats: GitHttpStats,
  entry: GitHttpRequestLogEntry,
): void {
  const stderr: Buffer[] = [];
  let pending: Buffer | undefined = Buffer.alloc(0);
  let failed = false;

  child.stdin.on('error', () => {}); // http-backend may exit before reading everything, e.g. on a 404.
  noteCommand(req, entry);
  req.pipe(child.stdin);
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  // A client that hangs up must not leave git running.
  res.on('close', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  child.stdout.on('data', (chunk: Buffer) => {
    if (pending === undefined) {
      writeBody(res, stats, entry, chunk, child);
      return;
    }
    pending = Buffer.concat([pending, chunk]);
    const parsed = parseCgiHead(pending);
    if (!parsed) {
      if (pending.length > MAX_CGI_HEAD_BYTES) {
        failed = true;
        child.kill('SIGKILL');
      }
      return;
    }
    const body = pending.subarray(parsed.bodyStart);
    pending = undefined;
    entry.status = parsed.head.status;
    res.statusCode = parsed.head.status;
    if (parsed.head.statusMessage) res.statusMessage = parsed.head.statusMessage;
    for (const [name, value] of parsed.head.headers) res.appendHeader(name, value);
    if (body.length > 0) writeBody(res, stats, entry, body, child);
  });

  child.on('error', (error) => {
    failed = true;
    stderr.push(Buffer.from(String(error)));
  });
  child.on('close', (code) => {
    if (pending === undefined && !failed) {
      res.end();
      return;
    }
    // No complete head: http-backend crashed or is missing. Say so instead of hanging.
    entry.error = Buffer.concat(stderr).toString('utf8') || `git http-backend exited with ${code}`;
    if (res.headersSent) res.destroy();
    else sendText(res, stats, entry, 502, `git http-backend failed: ${entry.error}\n`);
  });
}

// Counted when handed to the socket, so the numbers are final by the time the client has read them.
function writeBody(
  res: ServerResponse,
  stats: GitHttpStats,
  entry: GitHttpRequestLogEntry,
  chunk: Buffer,
  child: ChildProcessWithoutNullStreams,
): void {
  entry.bytes += chunk.length;
  stats.bytesServed += chunk.length;
  if (!res.write(chunk)) {
    child.stdout.pause();
    res.once('drain', () => child.stdout.resume());
  }
}

function sendText(
  res: ServerResponse,
  stats: GitHttpStats,
  entry: GitHttpRequestLogEntry,
  status: number,
  text: string,
): void {
  const body = Buffer.from(text, 'utf8');
  entry.status = status;
  entry.bytes += body.length;
  stats.bytesServed += body.length;
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
}

/**
 * Kills http-backend children first: a request whose body never ends (a stalled client)
 * would otherwise keep its child, and server.close(), waiting forever.
 */
async function closeServer(server: Server, children: Set<ChildProcessWithoutNullStreams>): Promise<void> {
  const exits = [...children].map(
    (child) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else {
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }
      }),
  );
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await Promise.all([...exits, closed]);
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function safeDecode(pathname: string): string {
  try {
    return decodeURIComponent(pathname);
  } catch {
    return pathname;
  }
}

/** Records the v2 `command=` and `filter` of a request from the first 16 KiB of its body (gunzipped when needed). */
function noteCommand(req: IncomingMessage, entry: GitHttpRequestLogEntry): void {
  if (entry.method !== 'POST') return;
  const head: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    if (size >= 16 * 1024) return;
    head.push(chunk);
    size += chunk.length;
  };
  req.on('data', onData);
  req.once('end', () => {
    req.off('data', onData);
    let body = Buffer.concat(head);
    try {
      if (entry.contentEncoding === 'gzip') body = gunzipSync(body, { finishFlush: zlibConstants.Z_SYNC_FLUSH });
    } catch {
      return;
    }
    const match = /command=([a-z-]+)/.exec(body.subarray(0, 1024).toString('latin1'));
    if (match) entry.command = match[1];
    const filter = pktLines(body.subarray(0, 16 * 1024)).find((line) => line.startsWith('filter '));
    if (filter !== undefined) entry.filter = filter.slice('filter '.length).replace(/\n$/, '');
  });
}

/** The payloads of git pkt-lines (four hex digits of length, then the line), up to the first that does not fit. */
function pktLines(body: Buffer): string[] {
  const lines: string[] = [];
  let at = 0;
  while (at + 4 <= body.length) {
    const length = Number.parseInt(body.subarray(at, at + 4).toString('latin1'), 16);
    if (!Number.isInteger(length)) break;
    if (length < 4) {
      at += 4; // flush, delimiter and response-end packets carry nothing
      continue;
    }
    if (at + length > body.length) break;
    lines.push(body.subarray(at + 4, at + length).toString('latin1'));
    at += length;
  }
  return lines;
}
