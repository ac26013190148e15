import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { basename } from 'node:path';

export interface PackServer {
  /** The archive's URL: plain http, which the provider accepts for loopback only. */
  url: string;
  /** Requests so far, by method. */
  count(method: 'HEAD' | 'GET'): number;
  close(): Promise<void>;
}

/**
 * Serves one file on 127.0.0.1 behind a bearer token, as a private artifact server would:
 * no token → 401, another token → 403. Only loopback: nothing here leaves this machine.
 */
export async function servePack(file: string, token: string): Promise<PackServer> {
  const body = await readFile(file);
  const path = `/${basename(file)}`;
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.method ?? '');
    if (request.url !== path) return response.writeHead(404).end();
    const given = request.headers.authorization;
    if (given === undefined) return response.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
    if (given !== `Bearer ${token}`) return response.writeHead(403).end();
    const headers = { 'content-type': 'application/gzip', 'content-length': String(body.length) };
    if (request.method === 'HEAD') return response.writeHead(200, headers).end();
    if (request.method !== 'GET') return response.writeHead(405).end();
    response.writeHead(200, headers).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server has no port');
  return {
    url: `http://127.0.0.1:${address.port}${path}`,
    count: (method) => requests.filter((entry) => entry === method).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
