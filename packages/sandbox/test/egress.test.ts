import { type Server, createServer as createHttpServer } from 'node:http';
import { lookup } from 'node:dns/promises';
import { type AddressInfo, type Socket, connect, createServer } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EgressHostError,
  SANDBOX_PROXY,
  defaultRunAs,
  runIsolated,
  spawnIsolated,
  startEgressProxy,
} from '../src/index.js';
import { PATH } from './support.js';

/** A host HTTP server on loopback that records each connection and each request's Host header. */
async function recordingServer(name: string) {
  const seen = { connections: 0, hosts: [] as string[], paths: [] as string[], sockets: new Set<Socket>() };
  const server: Server = createHttpServer((req, res) => {
    seen.hosts.push(req.headers.host ?? '');
    seen.paths.push(req.url ?? '');
    res.end(`${name} says hi`);
  });
  server.on('connection', (socket: Socket) => {
    seen.connections++;
    seen.sockets.add(socket);
    socket.on('close', () => seen.sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, port, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let granted: Awaited<ReturnType<typeof recordingServer>>;
let other: Awaited<ReturnType<typeof recordingServer>>;
beforeAll(async () => {
  granted = await recordingServer('granted');
  other = await recordingServer('other');
});
afterAll(async () => {
  granted.server.closeAllConnections();
  other.server.closeAllConnections();
  await Promise.all([granted.close(), other.close()]);
});

/** Sends `data` to the proxy's socket and gathers what comes back until the proxy closes (or `waitMs`). */
function exchange(socketPath: string, data: string, waitMs = 5000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ path: socketPath });
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, waitMs);
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.write(data);
  });
}

describe('without egress: no network at all', () => {
  it('a TCP connect to a port the host listens on fails, and the host sees no connection', async () => {
    const before = granted.seen.connections;
    const result = await runIsolated({
      argv: ['/usr/bin/curl', '-sS', '--max-time', '5', `http://127.0.0.1:${granted.port}/`],
      env: { PATH },
      timeoutMs: 20_000,
    });
    expect(result.reason).toEqual({ kind: 'exit', code: 7 });
    expect(result.stderr.toString()).toMatch(/Failed to connect|Couldn't connect/);
    expect(granted.seen.connections).toBe(before);
  });
});

describe('with egress: only granted host:port pairs, through the proxy', () => {
  it('granted: reachable through CONNECT and through an absolute-form request; others 403 and recorded', async () => {
    const egress = await startEgressProxy({ allow: [`127.0.0.1:${granted.port}`] });
    try {
      const before = other.seen.connections;
      const script = [
        `curl -sS -x ${SANDBOX_PROXY.url} http://127.0.0.1:${granted.port}/plain; echo`,
        `curl -sS -p -x ${SANDBOX_PROXY.url} http://127.0.0.1:${granted.port}/tunnel; echo`,
        `curl -s -o /dev/null -w '%{http_code}\\n' -x ${SANDBOX_PROXY.url} http://127.0.0.1:${other.port}/plain`,
        `curl -s -o /dev/null -w '%{http_connect}\\n' -p -x ${SANDBOX_PROXY.url} http://127.0.0.1:${other.port}/tunnel`,
        // The sandbox's loopback is its own: the granted port is not there without the proxy.
        `curl -s -o /dev/null -w '%{http_code}\\n' --max-time 5 http://127.0.0.1:${granted.port}/direct`,
      ].join('\n');
      const result = await runIsolated({ argv: ['/bin/sh', '-c', script], env: { PATH }, egress, timeoutMs: 30_000 });
      expect(result.stdout.toString()).toBe('granted says hi\ngranted says hi\n403\n403\n000\n');
      expect(egress.refused).toEqual([
        { host: '127.0.0.1', port: other.port },
        { host: '127.0.0.1', port: other.port },
      ]);
      expect(other.seen.connections).toBe(before);
    } finally {
      await egress.close();
    }
  });

  it('keep-alive does not smuggle: each request on one connection is checked, and Host is the granted authority', async () => {
    const egress = await startEgressProxy({ allow: [`127.0.0.1:${granted.port}`] });
    try {
      const before = other.seen.connections;
      const { text } = await exchange(
        egress.socketPath,
        `GET http://127.0.0.1:${granted.port}/first HTTP/1.1\r\nHost: 127.0.0.1:${other.port}\r\n\r\n` +
          `GET http://127.0.0.1:${other.port}/second HTTP/1.1\r\nHost: 127.0.0.1:${granted.port}\r\n\r\n`,
      );
      expect(text).toMatch(/^HTTP\/1\.1 200 [\s\S]*granted says hi[\s\S]*HTTP\/1\.1 403 /);
      expect(granted.seen.hosts.at(-1)).toBe(`127.0.0.1:${granted.port}`);
      expect(granted.seen.paths.at(-1)).toBe('/first');
      expect(other.seen.connections).toBe(before);
      expect(egress.refused).toEqual([{ host: '127.0.0.1', port: other.port }]);
    } finally {
      await egress.close();
    }
  });

  it('a name that resolves to a granted address is not granted by it (CONNECT localhost when 127.0.0.1 is granted)', async () => {
    const egress = await startEgressProxy({ allow: [`127.0.0.1:${granted.port}`] });
    try {
      const { text } = await exchange(egress.socketPath, `CONNECT localhost:${granted.port} HTTP/1.1\r\n\r\n`);
      expect(text).toMatch(/^HTTP\/1\.1 403 /);
      expect(egress.refused).toEqual([{ host: 'localhost', port: granted.port }]);
    } finally {
      await egress.close();
    }
  });

  it('a granted name that resolves to this machine is refused (DNS pointing a granted name inward); localhost and addresses are as granted', async () => {
    const name = hostname();
    const addresses = await lookup(name, { all: true });
    // This machine's name resolves to loopback here (/etc/hosts), as on most Debian machines.
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.every(({ address }) => address.startsWith('127.') || address === '::1')).toBe(true);
    const egress = await startEgressProxy({
      allow: [`${name}:${granted.port}`, `localhost:${granted.port}`, `127.0.0.1:${granted.port}`],
    });
    try {
      const before = granted.seen.connections;
      const byName = await exchange(egress.socketPath, `CONNECT ${name}:${granted.port} HTTP/1.1\r\n\r\n`);
      expect(byName.text).toMatch(/^HTTP\/1\.1 403 /);
      const absolute = await exchange(
        egress.socketPath,
        `GET http://${name}:${granted.port}/ HTTP/1.1\r\nHost: x\r\n\r\n`,
      );
      expect(absolute.text).toMatch(/^HTTP\/1\.1 403 /);
      expect(granted.seen.connections).toBe(before);
      expect(egress.refused).toEqual([
        { host: name, port: granted.port },
        { host: name, port: granted.port },
      ]);
      for (const host of ['localhost', '127.0.0.1']) {
        const { text } = await exchange(
          egress.socketPath,
          `GET http://${host}:${granted.port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
        );
        expect(text).toMatch(/^HTTP\/1\.1 200 [\s\S]*granted says hi$/);
      }
    } finally {
      await egress.close();
    }
  });

  it('a bare host grants ports 22, 80 and 443 only', async () => {
    const egress = await startEgressProxy({ allow: ['127.0.0.1'] });
    try {
      const refusedPort = await exchange(egress.socketPath, `CONNECT 127.0.0.1:${granted.port} HTTP/1.1\r\n\r\n`);
      expect(refusedPort.text).toMatch(/^HTTP\/1\.1 403 /);
      for (const port of [22, 80, 443]) {
        // Granted: the proxy tries to connect (200 if something listens there, 502 if not, nothing
        // yet if the connection attempt hangs), never 403.
        const { text } = await exchange(egress.socketPath, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`, 1000);
        expect(text).not.toMatch(/^HTTP\/1\.1 403 /);
      }
      expect(egress.refused).toEqual([{ host: '127.0.0.1', port: granted.port }]);
    } finally {
      await egress.close();
    }
  });

  it('refused keeps the first 1000 attempts; onRefused hears of every one', async () => {
    let heard = 0;
    const egress = await startEgressProxy({ onRefused: () => heard++ });
    try {
      for (let batch = 0; batch < 21; batch++)
        await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            exchange(egress.socketPath, `CONNECT 127.0.0.1:${1000 + batch * 50 + i} HTTP/1.1\r\n\r\n`),
          ),
        );
      expect(heard).toBe(1050);
      expect(egress.refused.length).toBe(1000);
    } finally {
      await egress.close();
    }
  });

  it('a proxy of another account, or a closed one, is a SandboxSpecError before anything runs', async () => {
    // Only root can give the proxy's folder to another account.
    if (process.getuid?.() === 0) {
      const stranger = await startEgressProxy({ owner: { uid: 12345, gid: 12345 } });
      try {
        expect(() => spawnIsolated({ argv: ['/bin/true'], egress: stranger, runAs: defaultRunAs() })).toThrow(
          expect.objectContaining({ code: 'SANDBOX_SPEC_INVALID', field: 'egress' }),
        );
      } finally {
        await stranger.close();
      }
    }
    const closed = await startEgressProxy();
    await closed.close();
    expect(() => spawnIsolated({ argv: ['/bin/true'], egress: closed })).toThrow(
      expect.objectContaining({ code: 'SANDBOX_SPEC_INVALID', field: 'egress' }),
    );
  });

  it('grant() replaces the granted hosts', async () => {
    const egress = await startEgressProxy({ allow: [`127.0.0.1:${granted.port}`] });
    try {
      egress.grant([]);
      expect(egress.granted).toEqual([]);
      const { text } = await exchange(egress.socketPath, `CONNECT 127.0.0.1:${granted.port} HTTP/1.1\r\n\r\n`);
      expect(text).toMatch(/^HTTP\/1\.1 403 /);
    } finally {
      await egress.close();
    }
  });

  it('an Upgrade request is refused, not tunnelled', async () => {
    const egress = await startEgressProxy({ allow: [`127.0.0.1:${granted.port}`] });
    try {
      const before = granted.seen.connections;
      const { text } = await exchange(
        egress.socketPath,
        `GET http://127.0.0.1:${granted.port}/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
      );
      expect(text).toMatch(/^HTTP\/1\.1 403 /);
      expect(granted.seen.connections).toBe(before);
    } finally {
      await egress.close();
    }
  });

  it('headers are bounded: a 20 KiB head is answered 431 without connecting', async () => {
    const egress = await startEgressProxy({ allow: [`127.0.0.1:${granted.port}`] });
    try {
      const before = granted.seen.connections;
      const { text } = await exchange(
        egress.socketPath,
        `GET http://127.0.0.1:${granted.port}/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`,
      );
      expect(text).toMatch(/^HTTP\/1\.1 431 /);
      expect(granted.seen.connections).toBe(before);
    } finally {
      await egress.close();
    }
  });

  it('a client that never finishes its request head is dropped after headersTimeoutMs', async () => {
    const egress = await startEgressProxy({ allow: [`127.0.0.1:${granted.port}`], headersTimeoutMs: 300 });
    try {
      const started = Date.now();
      const { closed } = await exchange(
        egress.socketPath,
        `GET http://127.0.0.1:${granted.port}/ HTTP/1.1\r\nHost: x\r\n`,
        5000,
      );
      expect(closed).toBe(true);
      expect(Date.now() - started).toBeLessThan(4000);
    } finally {
      await egress.close();
    }
  });

  it('close() ends open tunnels on both sides and removes the folder', async () => {
    const tcp = createServer();
    const upstreamClosed = new Promise<void>((resolve) => {
      tcp.on('connection', (socket) => {
        socket.on('error', () => undefined);
        socket.on('close', () => resolve());
      });
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const port = (tcp.address() as AddressInfo).port;
    const egress = await startEgressProxy({ allow: [`127.0.0.1:${port}`] });
    const client = connect({ path: egress.socketPath });
    client.on('error', () => undefined);
    const clientClosed = new Promise<void>((resolve) => client.on('close', () => resolve()));
    await new Promise<void>((resolve) => {
      client.once('data', (chunk) => {
        expect(chunk.toString()).toMatch(/^HTTP\/1\.1 200 /);
        resolve();
      });
      client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
    });
    await egress.close();
    await Promise.all([clientClosed, upstreamClosed]);
    const { existsSync } = await import('node:fs');
    expect(existsSync(egress.folder)).toBe(false);
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
  });

  it.each([
    '',
    'a b',
    'http://example.com',
    'example.com:0',
    'example.com:70000',
    'example.com/path',
    'user@example.com',
  ])('the grant %j is an EgressHostError, at start and in grant()', async (entry) => {
    await expect(startEgressProxy({ allow: [entry] })).rejects.toMatchObject({ code: 'SANDBOX_EGRESS_HOST_INVALID' });
    const egress = await startEgressProxy();
    try {
      expect(() => egress.grant([entry])).toThrow(EgressHostError);
    } finally {
      await egress.close();
    }
  });
});
