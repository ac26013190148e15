import { type Agent, request } from 'node:http';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: a parsed JSON answer the tests read field by field
  body: any;
  /** Whether the request went over a connection an earlier request had used. */
  reusedSocket: boolean;
  /** Whether the server asked for the body (`100 Continue`) of a request sent with `Expect: 100-continue`. */
  continued: boolean;
}

export interface PostOptions {
  /** Sent without Content-Length, in chunks of 64 KiB. */
  chunked?: boolean;
  /** Sends `Expect: 100-continue` and the body only if the server asks for it. */
  expectContinue?: boolean;
  method?: string;
  /** The agent whose connections are used; default: a fresh connection per request. */
  agent?: Agent;
}

/**
 * A real HTTP request with Node's own client. Resolves with the answer as soon as it has
 * arrived, even when the server answered before the whole body was sent (a 413): a write
 * failing after that is what a refused upload looks like, not an error of the test.
 */
export function post(url: string, body: Buffer, options: PostOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const headers: Record<string, string> = { 'content-type': 'application/gzip' };
    if (!options.chunked) headers['content-length'] = String(body.length);
    if (options.expectContinue) headers.expect = '100-continue';
    const req = request(url, { method: options.method ?? 'POST', headers, agent: options.agent ?? false });
    let answered = false;
    req.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Left as text.
        }
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: parsed,
          continued,
          reusedSocket: req.reusedSocket,
        });
      });
      response.on('error', reject);
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const send = () => {
      if (!options.chunked) return void req.end(body);
      for (let offset = 0; offset < body.length; offset += 64 * 1024)
        req.write(body.subarray(offset, offset + 64 * 1024));
      req.end();
    };
    if (options.expectContinue) {
      req.on('continue', () => {
        continued = true;
        send();
      });
      req.flushHeaders();
    } else send();
  });
}
