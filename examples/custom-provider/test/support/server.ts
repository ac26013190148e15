import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach } from 'vitest';

interface Route {
  body: Buffer;
  /** When set, requests need `Authorization: Bearer <token>`: none → 401, another → 403. */
  token?: string;
  /** Sends this many bytes of a GET and then holds the response open. */
  stallAfter?: number;
  /** Answers every request with this redirect instead. */
  redirectTo?: string;
}

interface RequestLogEntry {
  method: string;
  path: string;
  authorization: string | undefined;
}

export interface ArchiveServer {
  origin: string;
  requests: RequestLogEntry[];
  count(method: 'HEAD' | 'GET'): number;
  /** Serves `route` at `path`; returns its URL. */
  serve(path: string, route: Route): string;
  /** Resolves once a stalled GET has sent its first bytes. */
  stalled(): Promise<void>;
  close(): Promise<void>;
}

const open: ArchiveServer[] = [];

/** A plain HTTP server on 127.0.0.1 serving archives, logging every request it gets. */
export async function startArchiveServer(): Promise<ArchiveServer> {
  const routes = new Map<string, Route>();
  const requests: RequestLogEntry[] = [];
  const sockets = new Set<Socket>();
  let onStall: () => void = () => undefined;
  let stall = new Promise<void>((resolve) => (onStall = resolve));

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const path = request.url ?? '/';
    requests.push({ method: request.method ?? '', path, authorization: request.headers.authorization });
    const route = routes.get(path);
    if (!route) return response.writeHead(404).end();
    if (route.redirectTo) return response.writeHead(302, { location: route.redirectTo }).end();
    if (route.token !== undefined) {
      const given = request.headers.authorization;
      if (given === undefined) return response.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
      if (given !== `Bearer ${route.token}`) return response.writeHead(403).end();
    }
    const headers = { 'content-type': 'application/gzip', 'content-length': String(route.body.length) };
    if (request.method === 'HEAD') return response.writeHead(200, headers).end();
    if (request.method !== 'GET') return response.writeHead(405).end();
    response.writeHead(200, headers);
    if (route.stallAfter !== undefined) {
      response.write(route.body.subarray(0, route.stallAfter), () => onStall());
      return; // held open until the client goes away or the server closes
    }
    response.end(route.body);
  };

  const server = createServer(handle);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server has no port');
  const origin = `http://127.0.0.1:${address.port}`;

  const archiveServer: ArchiveServer = {
    origin,
    requests,
    count: (method) => requests.filter((entry) => entry.method === method).length,
    serve(path, route) {
      routes.set(path, route);
      return `${origin}${path}`;
    },
    stalled: () => stall,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      stall = Promise.resolve();
    },
  };
  open.push(archiveServer);
  return archiveServer;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});
