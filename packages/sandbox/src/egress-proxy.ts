import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import {
  Agent,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
  createServer,
  request as httpRequest,
} from 'node:http';
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, type Socket, connect, isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EgressHostError } from './errors.js';
import { defaultRunAs } from './spawn.js';

/** One connection a sandboxed process asked for. */
export interface EgressAttempt {
  /** The host as the sandbox named it (a name or an address literal, `[v6]` bracketed). */
  host: string;
  port: number;
}

/**
 * The only way out of a sandbox that may reach hosts: an HTTP proxy on a Unix socket in a
 * folder of its own, which the sandbox gets bound in. It opens a connection only to a
 * granted host and port (`CONNECT host:port`, which HTTPS and the SSH proxy command use, or
 * an absolute `http://` request), and answers everything else 403 without connecting.
 */
export interface EgressProxy {
  /** The host folder holding the socket (`proxy.sock`): what a sandbox binds. */
  readonly folder: string;
  /** The socket's host path. */
  readonly socketPath: string;
  /** Replaces the granted hosts: `host` (ports 22, 80 and 443) or `host:port`; `[v6]` and `[v6]:port` for IPv6. */
  grant(hosts: readonly string[]): void;
  /** The hosts granted now, as given. */
  readonly granted: readonly string[];
  /**
   * The attempts refused so far, in order: the first 1000 (a sandbox that keeps asking cannot
   * grow the host's memory); `onRefused` is called for every one.
   */
  readonly refused: readonly EgressAttempt[];
  /** Stops listening, ends every connection and removes the folder. */
  close(): Promise<void>;
}

/** How `startEgressProxy` starts. */
export interface EgressProxyOptions {
  /** Granted at start (see `grant`). Default none. */
  allow?: readonly string[];
  /** Where the proxy's folder is made. Default: the system temp folder. */
  parent?: string;
  /**
   * The account the sandboxes run as (default: `defaultRunAs()`, as spawnIsolated): when it
   * is not this process's, the folder is given to it (0700), so only that account and this
   * one can reach the socket.
   */
  owner?: { uid: number; gid: number };
  /** How long a client may take to send a request's head before it is dropped. Default 15 000 ms. */
  headersTimeoutMs?: number;
  /** Called for each refused attempt, after it is recorded. */
  onRefused?(attempt: EgressAttempt): void;
}

/** Headers that belong to one connection and are not forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** How many refused attempts `refused` keeps. */
const MAX_REFUSED_KEPT = 1000;

/** Ports a bare host grants: SSH, HTTP and HTTPS, the transports of the sources that name hosts. */
const DEFAULT_PORTS = new Set([22, 80, 443]);

interface Grant {
  host: string;
  port: number | undefined;
}

/**
 * Starts an egress proxy. Name resolution happens here, in the host: the sandbox has no
 * network and no resolver of its own, so it can only ask for a name, and a granted name is
 * the only thing it gets. Credentials in requests pass through unlogged; only host and port
 * of refusals are kept.
 *
 * @example
 * ```ts
 * import { runIsolated, startEgressProxy } from '@agentproto/sandbox';
 *
 * const egress = await startEgressProxy({ allow: ['registry.npmjs.org'] });
 * try {
 *   const result = await runIsolated({ argv: ['curl', '-sI', 'https://registry.npmjs.org/'], egress, env: { PATH: '/usr/bin', HTTPS_PROXY: 'http://127.0.0.1:3128' } });
 * } finally {
 *   await egress.close();
 * }
 * ```
 *
 * @throws {EgressHostError} `SANDBOX_EGRESS_HOST_INVALID`: an entry of `allow` is not `host` or `host:port`.
 */
export async function startEgressProxy(options: EgressProxyOptions = {}): Promise<EgressProxy> {
  let granted: readonly string[] = [];
  let grants: Grant[] = [];
  const grant = (hosts: readonly string[]) => {
    const parsed = hosts.map(parseGrant);
    granted = [...hosts];
    grants = parsed;
  };
  grant(options.allow ?? []);
  const refused: EgressAttempt[] = [];
  const isGranted = (host: string, port: number) => {
    const name = normalizeHost(host);
    return grants.some((g) => g.host === name && (g.port === undefined ? DEFAULT_PORTS.has(port) : g.port === port));
  };
  const refuse = (attempt: EgressAttempt) => {
    if (refused.length < MAX_REFUSED_KEPT) refused.push(attempt);
    options.onRefused?.(attempt);
  };

  const folder = await mkdtemp(join(options.parent ?? tmpdir(), 'agentproto-egress-'));
  const socketPath = join(folder, 'proxy.sock');
  const sockets = new Set<Socket>();
  // Bounded headers (16 KiB) and a bounded wait for them: a client that never finishes its
  // request head is dropped. A granted tunnel or a request body may take as long as it needs.
  const headersTimeout = options.headersTimeoutMs ?? 15_000;
  const server = createServer({
    maxHeaderSize: 16 * 1024,
    headersTimeout,
    requestTimeout: 0,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, headersTimeout / 2)),
  });
  // Its own agent: no upstream connection is shared with anything else, and close() ends them all.
  const agent = new Agent({ keepAlive: false });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => undefined);
    const target = parseAuthority(req.url ?? '');
    if (target === undefined || !isGranted(target.host, target.port)) {
      if (target !== undefined) refuse(target);
      client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    // Bytes the client sends before the tunnel is up wait in the socket, not lost.
    client.pause();
    void tunnel(client, target, head);
  });
  const tunnel = async (client: Socket, target: EgressAttempt, head: Buffer) => {
    const address = await addressOf(target.host);
    if (client.destroyed) return;
    if (address === 'internal') {
      refuse(target);
      client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (address === undefined) {
      client.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    // No Nagle on the tunnel: an SSH or TLS exchange of small writes would otherwise wait on
    // the peer's delayed ACK (40 ms a turn).
    const upstream = connect({ host: address, port: target.port, noDelay: true });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => {
      if (upstream.connecting) client.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      else client.destroy();
    });
    client.on('close', () => upstream.destroy());
  };
  server.on('request', (req, res) => {
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? '');
    } catch {
      url = undefined;
    }
    if (url === undefined || url.protocol !== 'http:') {
      res.writeHead(400, { Connection: 'close' }).end();
      return;
    }
    const target = { host: url.hostname, port: url.port === '' ? 80 : Number(url.port) };
    if (!isGranted(target.host, target.port)) {
      refuse(target);
      res.writeHead(403, { Connection: 'close' }).end();
      return;
    }
    void forward(req, res, url, target);
  });
  const forward = async (req: IncomingMessage, res: ServerResponse, url: URL, target: EgressAttempt) => {
    req.pause();
    const address = await addressOf(target.host);
    if (res.destroyed) return;
    if (address === 'internal') {
      refuse(target);
      res.writeHead(403, { Connection: 'close' }).end();
      return;
    }
    if (address === undefined) {
      res.writeHead(502, { Connection: 'close' }).end();
      return;
    }
    // Host is the granted authority, never the client's own Host header (which could name
    // another site served at the same address). Hop-by-hop headers stay here.
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (HOP_BY_HOP.has(name) || value === undefined) continue;
      headers[name] = value;
    }
    headers.host = url.host;
    const upstream = httpRequest(
      {
        agent,
        host: address,
        port: target.port,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers,
      },
      (answer) => {
        const answerHeaders: OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers))
          if (!HOP_BY_HOP.has(name) && value !== undefined) answerHeaders[name] = value;
        res.writeHead(answer.statusCode ?? 502, answerHeaders);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { Connection: 'close' });
      res.end();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
    req.resume();
  };
  // An Upgrade (WebSocket, h2c) is not proxied: the connection is refused, not tunnelled.
  server.on('upgrade', (_req: IncomingMessage, client: Socket) => {
    client.on('error', () => undefined);
    client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  // The folder (0700) is the boundary: the socket itself is open to whoever can reach it.
  await chmod(socketPath, 0o666);
  const owner = options.owner ?? defaultRunAs();
  if (owner.uid !== process.getuid?.()) await chown(folder, owner.uid, owner.gid);

  let closing: Promise<void> | undefined;
  return {
    folder,
    socketPath,
    grant,
    get granted() {
      return granted;
    },
    refused,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          for (const socket of sockets) socket.destroy();
          agent.destroy();
        });
        await rm(folder, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}

function parseGrant(entry: string): Grant {
  if (typeof entry !== 'string' || entry === '') throw new EgressHostError(String(entry), 'is empty');
  const authority = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(entry);
  if (!authority) throw new EgressHostError(entry, 'is not host or host:port');
  const port = authority[2] === undefined ? undefined : Number(authority[2]);
  if (port !== undefined && (port < 1 || port > 65535)) throw new EgressHostError(entry, 'has a port outside 1-65535');
  return { host: normalizeHost(authority[1] as string), port };
}

/** `host:port` of a CONNECT request; undefined when it is not one. */
function parseAuthority(value: string): EgressAttempt | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(value);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: match[1] as string, port };
}

function normalizeHost(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** Addresses a granted name must not lead to: this machine (loopback), link-local (cloud metadata at 169.254.169.254), unspecified, multicast. */
const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['224.0.0.0', 4],
  ['255.255.255.255', 32],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv6');

function isInternal(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return INTERNAL.check(mapped, 'ipv4');
  return INTERNAL.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/**
 * Where a granted host is reached, resolved once here (the connection goes to this address,
 * not to the name again): an address literal as written; `localhost` as the resolver says;
 * any other name to its first address that is not internal. `internal` when every address
 * is (a granted name pointed at this machine or the metadata endpoint); undefined when the
 * name does not resolve.
 */
async function addressOf(host: string): Promise<string | 'internal' | undefined> {
  const bare = unbracket(host);
  if (isIP(bare) !== 0) return bare;
  let found: LookupAddress[];
  try {
    found = await lookup(bare, { all: true, verbatim: true });
  } catch {
    return undefined;
  }
  if (normalizeHost(bare) === 'localhost') return found[0]?.address;
  const usable = found.find(({ address }) => !isInternal(address));
  if (usable !== undefined) return usable.address;
  return found.length > 0 ? 'internal' : undefined;
}

function unbracket(host: string): string {
  return host.startsWith('[') ? host.slice(1, -1) : host;
}
