import type { Server } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';

/**
 * A loopback port that was free a moment ago: the OS picks it for a listener on port 0,
 * which is then closed. Another process can take it before the caller binds it, so callers
 * that cannot listen on port 0 themselves (sshd) must retry when the bind fails.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/** Listens on a free 127.0.0.1 port chosen by the OS; resolves with the port. */
export function listenOnLoopback(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
