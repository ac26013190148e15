import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OciClient, RegistryError } from '../../src/index.js';

const MIB = 1024 * 1024;
/** What a hostile registry offers: far more than any bound, and far more than the memory allowed below. */
const HUGE = 600 * MIB;
/** Peak memory growth allowed while one answer is read: the largest bound (8 MiB) with room for buffers. */
const MEMORY_BOUND = 96 * MIB;

interface Served {
  /** Bytes of body the server wrote before the client closed the connection (or it ended). */
  written: number;
  /** True once the connection closed before the whole body was sent. */
  cutShort: boolean;
  done: Promise<void>;
}

/**
 * A registry on loopback whose every answer is `status` with a body of `HUGE` bytes, sent as
 * fast as the client takes it (backpressure honoured), without Content-Length unless asked.
 */
async function hostileRegistry(
  answer: (req: IncomingMessage) => {
    status: number;
    headers?: Record<string, string>;
    fill?: number;
    contentLength?: boolean;
  },
) {
  const served: Served[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const plan = answer(req);
    let resolveDone!: () => void;
    const record: Served = { written: 0, cutShort: false, done: new Promise((resolve) => (resolveDone = resolve)) };
    served.push(record);
    res.writeHead(plan.status, {
      'content-type': 'application/json',
      ...(plan.contentLength ? { 'content-length': String(HUGE) } : {}),
      ...plan.headers,
    });
    const chunk = Buffer.alloc(256 * 1024, plan.fill ?? 0x20);
    chunk.write('{"tags":["', 0);
    let first = true;
    res.on('close', () => {
      record.cutShort = record.written < HUGE;
      resolveDone();
    });
    const pump = () => {
      while (record.written < HUGE && !res.destroyed) {
        const piece = first ? chunk : chunk.fill(plan.fill ?? 0x20);
        first = false;
        record.written += piece.length;
        if (!res.write(piece)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push(server);
  return { url, served };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Runs `work` while sampling memory; returns its outcome and the peak growth of heap plus buffers. */
async function measured<T>(work: () => Promise<T>): Promise<{ outcome: T | unknown; peak: number }> {
  const usage = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  globalThis.gc?.();
  const start = usage();
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, usage() - start);
  }, 2);
  let outcome: T | unknown;
  try {
    outcome = await work();
  } catch (error) {
    outcome = error;
  }
  clearInterval(timer);
  peak = Math.max(peak, usage() - start);
  return { outcome, peak };
}

const client = (url: string, extra: Partial<ConstructorParameters<typeof OciClient>[0]> = {}) =>
  new OciClient({ url, repository: 'team/skills', allowInsecureHttp: true, timeoutMs: 10_000, ...extra });

describe('every registry answer is read up to a bound, and the connection is closed past it', () => {
  it('refuses an endless tag list at its limit (REGISTRY_TOO_LARGE names it), in bounded memory, and closes the connection', async () => {
    const { url, served } = await hostileRegistry(() => ({ status: 200 }));
    const { outcome, peak } = await measured(() => client(url).listTags());
    expect(outcome).toBeInstanceOf(RegistryError);
    expect(outcome).toMatchObject({ code: 'REGISTRY_TOO_LARGE', limit: 8 * MIB });
    expect((outcome as Error).message).toContain(String(8 * MIB));
    expect(peak).toBeLessThan(MEMORY_BOUND);
    await served[0]!.done;
    expect(served[0]!.cutShort).toBe(true);
    expect(served[0]!.written).toBeLessThan(64 * MIB);
  });

  it('honours a smaller tag list limit, and refuses a declared Content-Length over it before reading', async () => {
    const { url, served } = await hostileRegistry(() => ({ status: 200, contentLength: true }));
    const { outcome, peak } = await measured(() => client(url, { maxTagListBytes: 1 * MIB }).listTags());
    expect(outcome).toMatchObject({ code: 'REGISTRY_TOO_LARGE', limit: 1 * MIB });
    expect(peak).toBeLessThan(MEMORY_BOUND);
    await served[0]!.done;
    expect(served[0]!.cutShort).toBe(true);
  });

  it('reads only the start of an endless error body, keeps the status, and closes the connection', async () => {
    const { url, served } = await hostileRegistry(() => ({ status: 500 }));
    const { outcome, peak } = await measured(() => client(url).getManifest('v1'));
    expect(outcome).toMatchObject({ code: 'REGISTRY_UNREACHABLE', status: 500 });
    expect(peak).toBeLessThan(MEMORY_BOUND);
    await served[0]!.done;
    expect(served[0]!.cutShort).toBe(true);
    expect(served[0]!.written).toBeLessThan(64 * MIB);
  });

  it('refuses an endless token answer at its limit and closes the connection', async () => {
    let registryUrl = '';
    const { url, served } = await hostileRegistry((req) =>
      req.url?.startsWith('/token')
        ? { status: 200 }
        : { status: 401, headers: { 'www-authenticate': `Bearer realm="${registryUrl}/token",service="registry"` } },
    );
    registryUrl = url;
    const auth = () => ({ username: 'user', password: 'pass' });
    const { outcome, peak } = await measured(() => client(url, { auth }).getManifest('v1'));
    expect(outcome).toMatchObject({ code: 'REGISTRY_TOO_LARGE', limit: 1 * MIB });
    expect((outcome as Error).message).not.toContain('pass');
    expect(peak).toBeLessThan(MEMORY_BOUND);
    await Promise.all(served.map((s) => s.done));
    expect(served.every((s) => s.cutShort)).toBe(true);
  });

  it('refuses an endless manifest at its limit and closes the connection', async () => {
    const { url, served } = await hostileRegistry(() => ({
      status: 200,
      headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
    }));
    const { outcome, peak } = await measured(() => client(url).getManifest('v1'));
    expect(outcome).toMatchObject({ code: 'REGISTRY_TOO_LARGE', limit: 4 * MIB });
    expect(peak).toBeLessThan(MEMORY_BOUND);
    await served[0]!.done;
    expect(served[0]!.cutShort).toBe(true);
  });

  it('refuses an endless blob at the caller’s limit and closes the connection', async () => {
    const { url, served } = await hostileRegistry(() => ({ status: 200 }));
    const digest = `sha256:${'a'.repeat(64)}`;
    const { outcome, peak } = await measured(() => client(url).getBlob(digest, 2 * MIB));
    expect(outcome).toMatchObject({ code: 'REGISTRY_TOO_LARGE', limit: 2 * MIB });
    expect(peak).toBeLessThan(MEMORY_BOUND);
    await served[0]!.done;
    expect(served[0]!.cutShort).toBe(true);
  });
});
