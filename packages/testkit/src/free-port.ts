import { createServer } from 'node:net';

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
