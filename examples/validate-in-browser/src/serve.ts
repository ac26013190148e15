// Serves the built page on 127.0.0.1: static files only, each with the page's
// Content-Security-Policy as a header too (no `unsafe-eval`, no connection anywhere).
//   node --conditions=@agentproto/source --import tsx src/serve.ts [--port 8080]
import { readFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPage } from './build.js';

/** The policy the page is served with (the same as its own meta tag). */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'none'; form-action 'none'; base-uri 'none'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};
const FILES = new Set(['/index.html', '/app.js', '/style.css']);

export interface PageServer {
  url: string;
  close(): Promise<void>;
}

/** Builds the page (buildPage: `sources`) and serves it from 127.0.0.1:`port` (0: any free port). */
export async function startPageServer(port = 0, sources?: boolean): Promise<PageServer> {
  const dir = await buildPage(sources);
  const server: Server = createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const file = path === '/' ? '/index.html' : path;
    // A browser asks for a tab icon on its own; the page has none.
    if (file === '/favicon.ico') {
      response.writeHead(204, { 'content-security-policy': PAGE_CSP }).end();
      return;
    }
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !FILES.has(file)) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const body = await readFile(join(dir, file));
    response
      .writeHead(200, {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        'content-security-policy': PAGE_CSP,
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
      })
      .end(request.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  return {
    url: `http://127.0.0.1:${bound}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const at = process.argv.indexOf('--port');
  const port = at < 0 ? 8080 : Number(process.argv[at + 1]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error('--port takes a port number');
    process.exit(2);
  }
  const page = await startPageServer(port);
  console.log(`The plugin validator is at ${page.url} (Ctrl-C stops it)`);
  process.once('SIGINT', () => void page.close().then(() => process.exit(0)));
}
