import { mkdtemp, rm } from 'node:fs/promises';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pLimit from 'p-limit';
import { readBody } from './body.js';
import { BodyAbortedError, BodyTooLargeError } from './errors.js';
import { type JsonResponse, errorResponse, failureResponse } from './responses.js';
import { validatePluginArchive } from './validate-archive.js';

export interface ValidationServerOptions {
  /** Port on 127.0.0.1; 0 lets the system pick one. Default 8787. */
  port?: number;
  /** Where each request's folder is made. Default: a fresh folder in the OS temp folder, removed by close(). */
  tempRoot?: string;
  /** Largest request body (the .tar.gz). Default 16 MiB. */
  maxBodyBytes?: number;
  /** Most bytes of the tar once inflated. Default 64 MiB. */
  maxUnpackedBytes?: number;
  /** Most files in one archive. Default 5,000. */
  maxFiles?: number;
  /** Requests extracted and validated at once; the others wait their turn. Default 4. */
  maxConcurrent?: number;
  /** A request must arrive whole within this time. Default 30 s. */
  requestTimeoutMs?: number;
  /** Told about failures answered with a 500 (their details stay out of the response). */
  onError?: (error: unknown) => void;
}

export interface ValidationServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  tempRoot: string;
  /** Stops listening, drops open connections, waits for requests in flight, removes a temp root it made. */
  close(): Promise<void>;
}

const MIB = 1024 * 1024;

/**
 * An HTTP endpoint that validates packaged plugins: `POST /validate` with a .tar.gz body
 * answers 200 with the findings, 400 for an archive the safe reader refuses, 413 for a body
 * over the limit. It listens on 127.0.0.1 only.
 */
export async function startValidationServer(options: ValidationServerOptions = {}): Promise<ValidationServer> {
  const limits = {
    maxBodyBytes: options.maxBodyBytes ?? 16 * MIB,
    maxUnpackedBytes: options.maxUnpackedBytes ?? 64 * MIB,
    maxFiles: options.maxFiles ?? 5_000,
  };
  const ownTempRoot = options.tempRoot === undefined;
  const tempRoot =
    options.tempRoot === undefined
      ? await mkdtemp(join(tmpdir(), 'agentproto-embed-validation-'))
      : resolve(options.tempRoot);
  // Memory and disk are bounded by the slots: each holds one body (maxBodyBytes) and one extracted tree.
  const slot = pLimit(options.maxConcurrent ?? 4);
  const inFlight = new Set<Promise<void>>();

  const handle = async (
    request: IncomingMessage,
    response: ServerResponse,
    expectsContinue: boolean,
  ): Promise<void> => {
    // An answer before the body is read. A client that sent `Expect: 100-continue` has not
    // sent its body and will not: the connection cannot carry another request, so it closes.
    const refuse = (answer: JsonResponse, close = expectsContinue) =>
      send(response, close ? { ...answer, headers: { ...answer.headers, connection: 'close' } } : answer);
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== '/validate') return refuse(errorResponse(404, 'NOT_FOUND', 'POST a .tar.gz to /validate'));
    if (request.method !== 'POST')
      return refuse(errorResponse(405, 'METHOD_NOT_ALLOWED', 'POST a .tar.gz to /validate', {}, { allow: 'POST' }));

    const declared =
      request.headers['content-length'] === undefined ? undefined : Number(request.headers['content-length']);
    if (declared !== undefined && declared > limits.maxBodyBytes) {
      // Refused on the header, before a byte of the body is read. Node reads and drops the
      // body after the answer, so the client sees the 413 rather than a reset; a body too big
      // to be worth that closes the connection instead.
      return refuse(
        failureResponse(new BodyTooLargeError(limits.maxBodyBytes, declared)),
        expectsContinue || declared > 2 * limits.maxBodyBytes,
      );
    }

    await slot(async () => {
      // Only now is the client asked for its body: a queued request holds no bytes of it here.
      if (expectsContinue) response.writeContinue();
      let answer: JsonResponse;
      try {
        const body = await readBody(request, limits.maxBodyBytes, limits.maxBodyBytes);
        answer = { status: 200, body: await validatePluginArchive(body, { ...limits, tempRoot }) };
      } catch (error) {
        if (error instanceof BodyAbortedError) return;
        answer = failureResponse(error);
        if (answer.status === 500) options.onError?.(error);
      }
      send(response, answer);
    });
  };

  const track = (request: IncomingMessage, response: ServerResponse, expectsContinue: boolean) => {
    const done = handle(request, response, expectsContinue)
      .catch((error: unknown) => {
        options.onError?.(error);
        if (!response.headersSent) send(response, failureResponse(error));
      })
      .finally(() => inFlight.delete(done));
    inFlight.add(done);
  };

  const server: Server = createServer({ requestTimeout: options.requestTimeoutMs ?? 30_000 }, (request, response) =>
    track(request, response, false),
  );
  // Without this handler Node answers `100 Continue` itself, and the client sends a body we
  // may refuse on its Content-Length alone.
  server.on('checkContinue', (request, response) => track(request, response, true));
  try {
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 8787, '127.0.0.1', () => {
        server.off('error', reject);
        resolveListen();
      });
    });
  } catch (error) {
    // The port is taken (EADDRINUSE): nothing will ever use the temp root made for it.
    if (ownTempRoot) await rm(tempRoot, { recursive: true, force: true });
    throw error;
  }
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server has no port');

  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    tempRoot,
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolveClose) => server.close(() => resolveClose()));
        server.closeAllConnections();
        await closed;
        // A request whose client is gone may still be extracting: its folder goes when it ends.
        await Promise.allSettled([...inFlight]);
        if (ownTempRoot) await rm(tempRoot, { recursive: true, force: true });
      })()),
  };
}

function send(response: ServerResponse, answer: JsonResponse): void {
  if (response.destroyed) return;
  const text = `${JSON.stringify(answer.body)}\n`;
  response.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...answer.headers,
  });
  response.end(text);
}
