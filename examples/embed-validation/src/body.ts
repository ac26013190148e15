import type { IncomingMessage } from 'node:http';
import { BodyAbortedError, BodyTooLargeError } from './errors.js';

/**
 * Reads a request body whole, refusing it once it passes `maxBytes` (BodyTooLargeError),
 * whatever the Content-Length said: a chunked body has none.
 *
 * After a refusal the rest is still read and dropped, up to `drainBytes` more, so the
 * connection stays in step and the client reads the 413 instead of a reset. Past that the
 * socket is destroyed: a client that keeps sending has been answered.
 */
export function readBody(request: IncomingMessage, maxBytes: number, drainBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // A request that waited for a slot may have lost its client meanwhile: 'close' was then
    // emitted before anyone listened.
    if (request.destroyed) {
      reject(new BodyAbortedError());
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let refused = false;
    let ended = false;
    request.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (refused) {
        if (received > maxBytes + drainBytes) request.destroy();
        return;
      }
      if (received > maxBytes) {
        refused = true;
        chunks.length = 0;
        reject(new BodyTooLargeError(maxBytes, undefined));
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      ended = true;
      if (!refused) resolve(Buffer.concat(chunks, received));
    });
    // 'close' without 'end': the client went away mid-body (or we cut it off after a refusal).
    request.on('close', () => {
      if (!ended && !refused) reject(new BodyAbortedError());
    });
    request.on('error', () => {
      // Followed by 'close', which settles the promise.
    });
  });
}
