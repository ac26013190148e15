import { createHash, randomBytes } from 'node:crypto';
import { open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HttpClient } from 'isomorphic-git';
import {
  GitAuthFailedError,
  GitError,
  GitIoError,
  GitPackTooLargeError,
  GitRepositoryNotFoundError,
  GitTransportError,
} from '../errors.js';
import { guardedHttp } from '../isomorphic-git/guarded-http.js';
import type { RemoteRef } from '../remote-refs.js';
import { redact } from '../redact.js';
import { commandFailure } from './failure.js';

/**
 * Smart HTTP, protocol v2, spoken from this process (the system engine's `httpInProcess`):
 * the ref listing is one `ls-refs` POST, and each fetch one `fetch` POST whose pack is
 * written as it arrives into the gitdir's pack folder and indexed there by `git index-pack`
 * (the only process started). What `git ls-remote` and `git fetch` cost on top, per call, is
 * a process chain (git, `git remote-http`, `git-remote-http`) and a GET of the
 * capabilities; here the capabilities are read once per work folder.
 *
 * The same rules as the git commands the engine would otherwise run: no redirects, the
 * request's headers and nothing else, the pack cap counted on the pack's own bytes (the
 * transfer stops at the first byte past it). A server that does not speak what a request
 * needs (protocol v2 with `ls-refs`, or `fetch` with `shallow` and `filter` as asked, SHA-1
 * objects: `supports`) is left to the git commands by the engine.
 */

const PKT_MAX = 65520;
/** The most bytes of non-pack lines (capabilities, shallow-info, …) a response may hold. */
const LINES_MAX = 1 << 20;

export interface HttpFetchSession {
  url: string;
  /** The operation's private work folder: what the capabilities are kept for. */
  workDir: string;
  headers: Readonly<Record<string, string>>;
  secrets: readonly string[];
  signal: AbortSignal | undefined;
}

export interface HttpFetchRequest {
  gitdir: string;
  wants: readonly string[];
  /** A filter spec (`blob:none`, `combine:blob:none+tree:2`), or undefined for none. */
  filter?: string;
  /** `deepen 1`: the wants' history stops at them (written to the gitdir's `shallow`). */
  shallow?: boolean;
  maxPackBytes?: number;
  /** For a fetch of one commit: the server refusing it is GitCommitUnavailableError. */
  commit?: string;
  signal: AbortSignal | undefined;
  /** Indexes the pack file in place (`git index-pack --promisor <file>`), started on the engine's host. */
  indexPack(packFile: string): Promise<{ code: number; stderr: Buffer }>;
}

/** What the server's capability advertisement allows. */
export interface ServerCapabilities {
  v2: boolean;
  /** The server answers `ls-refs`. */
  lsRefs: boolean;
  fetch: ReadonlySet<string>;
  objectFormat: string;
}

let nodeClient: Promise<HttpClient> | undefined;
const defaultClient = (): Promise<HttpClient> =>
  (nodeClient ??= import('isomorphic-git/http/node').then((module) => ({ request: module.request })));

function client(session: HttpFetchSession, signal: AbortSignal | undefined, http: HttpClient): HttpClient {
  return guardedHttp(http, { signal, credentials: Object.keys(session.headers), followRedirects: false });
}

/**
 * Capabilities are kept per work folder: the engine calls of one operation (a directory's
 * tree id, then its files, in the same private folder) share one GET, and another folder
 * asks again. Keyed by the folder, the URL and the exact headers, so other credentials ask
 * again too, and dropped after a minute; they authorize nothing (every POST carries the
 * credentials and is checked by the server).
 */
const CAPABILITIES_TTL_MS = 60_000;
const CAPABILITIES_KEPT = 32;
const known = new Map<string, { at: number; capabilities: ServerCapabilities }>();

function capabilityKey(session: HttpFetchSession): string {
  const headers = Object.entries(session.headers).map(([name, value]) => [name.toLowerCase(), value]);
  headers.sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1));
  return createHash('sha256')
    .update(JSON.stringify([session.workDir, session.url, headers]))
    .digest('hex');
}

/** `GET <url>/info/refs?service=git-upload-pack` asking for protocol v2: the server's capabilities. */
export async function readCapabilities(session: HttpFetchSession, http?: HttpClient): Promise<ServerCapabilities> {
  const key = capabilityKey(session);
  const kept = known.get(key);
  if (kept !== undefined && Date.now() - kept.at < CAPABILITIES_TTL_MS) return kept.capabilities;
  let capabilities: ServerCapabilities;
  try {
    capabilities = await advertisement(session, http);
  } catch (error) {
    if (session.signal?.aborted) throw session.signal.reason;
    throw transportFailure(session.url, error);
  }
  known.delete(key);
  known.set(key, { at: Date.now(), capabilities });
  for (const oldest of known.keys()) {
    if (known.size <= CAPABILITIES_KEPT) break;
    known.delete(oldest);
  }
  return capabilities;
}

async function advertisement(session: HttpFetchSession, http?: HttpClient): Promise<ServerCapabilities> {
  const { url, signal } = session;
  const response = await client(session, signal, http ?? (await defaultClient())).request({
    url: `${url}/info/refs?service=git-upload-pack`,
    method: 'GET',
    headers: { ...session.headers, 'user-agent': 'git/agentproto', 'git-protocol': 'version=2' },
  });
  await checkStatus(session, response.statusCode, response.body);
  const lines: string[] = [];
  const reader = new PktReader(response.body, url);
  try {
    for (;;) {
      const packet = await reader.next();
      if (packet === 'end') break;
      if (packet === FLUSH) {
        // The smart HTTP preamble (`# service=git-upload-pack`, then a flush) ends with a
        // flush; the v2 advertisement ends with the only other one.
        if (lines.length === 1 && lines[0]?.startsWith('# service=')) continue;
        break;
      }
      if (packet === DELIM || packet === RESPONSE_END) break;
      lines.push(text(packet));
      if (reader.lineBytes > LINES_MAX) throw new GitTransportError(url, 'the capability advertisement is too long');
    }
  } finally {
    // Whatever follows is not read (or the read failed): the body is dropped.
    await reader.close();
  }
  const advertised = lines.filter((line) => !line.startsWith('# service='));
  if (advertised[0] !== 'version 2') return { v2: false, lsRefs: false, fetch: new Set(), objectFormat: 'sha1' };
  let fetch: Set<string> | undefined;
  let lsRefs = false;
  let objectFormat = 'sha1';
  for (const line of advertised.slice(1)) {
    if (line === 'ls-refs' || line.startsWith('ls-refs=')) lsRefs = true;
    if (line === 'fetch' || line.startsWith('fetch=')) fetch = new Set(line.slice('fetch='.length).split(' '));
    if (line.startsWith('object-format=')) objectFormat = line.slice('object-format='.length);
  }
  return { v2: true, lsRefs, fetch: fetch ?? new Set(), objectFormat };
}

/** Whether `request` can be made in-process against a server with these capabilities. */
export function supports(capabilities: ServerCapabilities, request: Pick<HttpFetchRequest, 'filter' | 'shallow'>) {
  return (
    capabilities.v2 &&
    capabilities.fetch.size > 0 &&
    capabilities.objectFormat === 'sha1' &&
    (request.filter === undefined || capabilities.fetch.has('filter')) &&
    (!request.shallow || capabilities.fetch.has('shallow'))
  );
}

/** The most bytes of an `ls-refs` answer: some 400,000 refs. */
const REFS_MAX = 64 * 1024 * 1024;

/**
 * Every ref, as `git ls-remote --symref` lists them: protocol v2 `ls-refs` with `peel` and
 * `symrefs`, one POST (the capabilities came with readCapabilities). The lines are split
 * here; names and ids are checked by the caller (checkServerRefs), as for every engine.
 */
export async function listRefsOverHttp(session: HttpFetchSession, http?: HttpClient): Promise<RemoteRef[]> {
  const { url } = session;
  const stop = new AbortController();
  const onAbort = () => stop.abort(session.signal?.reason);
  session.signal?.throwIfAborted();
  session.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await client(session, stop.signal, http ?? (await defaultClient())).request({
      url: `${url}/git-upload-pack`,
      method: 'POST',
      headers: postHeaders(session),
      body: once(
        new Uint8Array(
          Buffer.concat([
            pkt('command=ls-refs\n'),
            pkt('agent=git/agentproto\n'),
            pkt('object-format=sha1\n'),
            DELIM_BYTES,
            pkt('peel\n'),
            pkt('symrefs\n'),
            FLUSH_BYTES,
          ]),
        ),
      ),
    });
    await checkStatus(session, response.statusCode, response.body);
    const reader = new PktReader(response.body, url);
    const refs: RemoteRef[] = [];
    for (;;) {
      const packet = await reader.next();
      if (packet === FLUSH) break;
      if (packet === 'end' || packet === DELIM || packet === RESPONSE_END)
        throw new GitTransportError(url, 'the ref listing ended before its end');
      if (reader.lineBytes > REFS_MAX) throw new GitTransportError(url, 'the ref listing is too long');
      const line = text(packet);
      if (line.startsWith('ERR ')) throw remoteError(session, {}, line.slice(4));
      const [oid, name, ...attributes] = line.split(' ');
      if (oid === undefined || name === undefined)
        throw new GitTransportError(url, 'the server listed a malformed ref line');
      const ref: RemoteRef = { name, oid };
      for (const attribute of attributes) {
        if (attribute.startsWith('symref-target:')) ref.symref = attribute.slice('symref-target:'.length);
        else if (attribute.startsWith('peeled:')) ref.peeled = attribute.slice('peeled:'.length);
      }
      refs.push(ref);
    }
    return refs;
  } catch (error) {
    if (session.signal?.aborted) throw session.signal.reason;
    throw transportFailure(url, error);
  } finally {
    session.signal?.removeEventListener('abort', onAbort);
    if (!stop.signal.aborted) stop.abort(new Error('the listing is over'));
  }
}

function postHeaders(session: HttpFetchSession): Record<string, string> {
  return {
    ...session.headers,
    'user-agent': 'git/agentproto',
    'git-protocol': 'version=2',
    'content-type': 'application/x-git-upload-pack-request',
    accept: 'application/x-git-upload-pack-result',
  };
}

/**
 * One protocol v2 `fetch` with `done` (no negotiation: the gitdir's objects are never
 * offered), its pack streamed into `<gitdir>/objects/pack/incoming-<random>.pack` and then
 * indexed. Any failure removes the pack file; the gitdir is otherwise untouched until the
 * index exists (git reads a pack only through its `.idx`).
 */
export async function fetchPack(
  session: HttpFetchSession,
  request: HttpFetchRequest,
  http?: HttpClient,
): Promise<void> {
  const { url } = session;
  const stop = new AbortController();
  const onAbort = () => stop.abort(request.signal?.reason);
  request.signal?.throwIfAborted();
  request.signal?.addEventListener('abort', onAbort, { once: true });
  const packFile = join(request.gitdir, 'objects', 'pack', `incoming-${randomBytes(12).toString('hex')}.pack`);
  let written = false;
  try {
    const body = [
      pkt('command=fetch\n'),
      pkt('agent=git/agentproto\n'),
      pkt('object-format=sha1\n'),
      DELIM_BYTES,
      ...request.wants.map((want) => pkt(`want ${want}\n`)),
      pkt('no-progress\n'),
      pkt('ofs-delta\n'),
      ...(request.shallow ? [pkt('deepen 1\n')] : []),
      ...(request.filter === undefined ? [] : [pkt(`filter ${request.filter}\n`)]),
      pkt('done\n'),
      FLUSH_BYTES,
    ];
    const response = await client(session, stop.signal, http ?? (await defaultClient())).request({
      url: `${url}/git-upload-pack`,
      method: 'POST',
      headers: postHeaders(session),
      body: once(new Uint8Array(Buffer.concat(body))),
    });
    await checkStatus(session, response.statusCode, response.body);
    const reader = new PktReader(response.body, url);
    const shallow: string[] = [];
    const unshallow: string[] = [];
    let section: string | undefined;
    let sawPack = false;
    const handle = await openPack(packFile);
    written = true;
    let packBytes = 0;
    try {
      for (;;) {
        const packet = await reader.next();
        if (packet === 'end') throw new GitTransportError(url, 'the fetch response ended before the pack did');
        if (packet === DELIM) {
          section = undefined;
          continue;
        }
        if (packet === FLUSH || packet === RESPONSE_END) {
          if (section === 'packfile') break;
          throw new GitTransportError(url, 'the fetch response ended without a pack');
        }
        if (section === undefined) {
          const line = text(packet);
          if (line.startsWith('ERR ')) throw remoteError(session, request, line.slice(4));
          section = line;
          if (!['acknowledgments', 'shallow-info', 'wanted-refs', 'packfile-uris', 'packfile'].includes(section)) {
            const shown = JSON.stringify(redact(line.slice(0, 80), session.secrets));
            throw new GitTransportError(url, `the fetch response has an unknown section ${shown}`);
          }
          if (section === 'packfile') sawPack = true;
          continue;
        }
        if (section === 'packfile') {
          const band = packet[0];
          if (band === 1) {
            packBytes += packet.length - 1;
            if (request.maxPackBytes !== undefined && packBytes > request.maxPackBytes) {
              stop.abort(new GitPackTooLargeError(url, request.maxPackBytes));
              throw new GitPackTooLargeError(url, request.maxPackBytes);
            }
            await handle.write(packet, 1, packet.length - 1);
          } else if (band === 3) {
            throw remoteError(session, request, text(packet.subarray(1)));
          } else if (band === 2) {
            if (reader.lineBytes > LINES_MAX) throw new GitTransportError(url, 'the fetch response is too long');
          } else if (text(packet).startsWith('ERR ')) {
            throw remoteError(session, request, text(packet).slice(4));
          } else {
            throw new GitTransportError(url, 'the pack came on an unknown side band');
          }
          continue;
        }
        const line = text(packet);
        if (line.startsWith('ERR ')) throw remoteError(session, request, line.slice(4));
        if (reader.lineBytes > LINES_MAX) throw new GitTransportError(url, 'the fetch response is too long');
        if (section === 'shallow-info') {
          const match = /^(shallow|unshallow) ([0-9a-f]{40})$/.exec(line);
          if (!match) throw new GitTransportError(url, 'the fetch response has a malformed shallow line');
          (match[1] === 'shallow' ? shallow : unshallow).push(match[2] as string);
        }
        // acknowledgments (none: `done` was sent), wanted-refs (none: no want-ref),
        // packfile-uris (not asked for): read past.
      }
    } finally {
      await handle.close();
    }
    if (!sawPack || packBytes === 0) throw new GitTransportError(url, 'the fetch response ended without a pack');
    await reader.close();
    request.signal?.throwIfAborted();
    const indexed = await request.indexPack(packFile);
    if (indexed.code !== 0) {
      throw new GitTransportError(
        url,
        `the pack sent is not valid: ${redact(indexed.stderr.toString('utf8'), session.secrets).trim().split('\n').pop()?.slice(0, 300) ?? ''}`,
      );
    }
    written = false;
    if (shallow.length > 0 || unshallow.length > 0) await updateShallow(request.gitdir, shallow, unshallow);
  } catch (error) {
    if (stop.signal.aborted && stop.signal.reason instanceof GitPackTooLargeError) throw stop.signal.reason;
    if (request.signal?.aborted) throw request.signal.reason;
    throw transportFailure(url, error);
  } finally {
    request.signal?.removeEventListener('abort', onAbort);
    // Whatever is left of the response is not read: the connection is closed, not drained.
    if (!stop.signal.aborted) stop.abort(new Error('the fetch is over'));
    if (written) await rm(packFile, { force: true }).catch(() => undefined);
  }
}

async function openPack(packFile: string) {
  try {
    // `wx`: a fresh name only, never through an existing one.
    return await open(packFile, 'wx', 0o444);
  } catch (error) {
    throw new GitIoError(packFile, 'write the received pack to', error);
  }
}

/** The gitdir's `shallow` file with `add` in it and `remove` out, replaced whole (written aside, then renamed). */
async function updateShallow(gitdir: string, add: readonly string[], remove: readonly string[]): Promise<void> {
  const file = join(gitdir, 'shallow');
  let current: string[] = [];
  try {
    current = (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOENT') throw new GitIoError(file, 'read', error);
  }
  const ids = new Set(current);
  for (const id of add) ids.add(id);
  for (const id of remove) ids.delete(id);
  const aside = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(
      aside,
      [...ids]
        .sort()
        .map((id) => `${id}\n`)
        .join(''),
      { flag: 'wx', mode: 0o644 },
    );
    await rename(aside, file);
  } catch (error) {
    await rm(aside, { force: true }).catch(() => undefined);
    throw new GitIoError(file, 'write', error);
  }
}

/** An error the server sent (`ERR` line, or side band 3), as the git command's failure would read. */
function remoteError(session: HttpFetchSession, request: { commit?: string }, message: string): GitError {
  return commandFailure(Buffer.from(`fatal: remote error: ${message.trim()}\n`), 128, {
    url: session.url,
    command: 'fetch',
    secrets: session.secrets,
    ...(request.commit === undefined ? {} : { commit: request.commit }),
  });
}

/** A failure of the HTTP client itself (refused connection, reset, TLS) as a GitTransportError; GitErrors as they are. */
function transportFailure(url: string, error: unknown): unknown {
  if (error instanceof GitError) return error;
  const reason =
    error instanceof Error ? `${(error as { code?: unknown }).code ?? error.name}: ${error.message}` : String(error);
  return new GitTransportError(url, reason.length > 300 ? `${reason.slice(0, 300)}…` : reason, undefined, error);
}

/** A status other than 200, as git reports it; the body is dropped. */
async function checkStatus(
  session: HttpFetchSession,
  status: number,
  body: AsyncIterableIterator<Uint8Array> | undefined,
): Promise<void> {
  if (status === 200) return;
  await Promise.resolve(body?.return?.()).catch(() => undefined);
  const { url } = session;
  if (status === 401 || status === 403) throw new GitAuthFailedError(url, status);
  if (status === 404) throw new GitRepositoryNotFoundError(url);
  if (status >= 300 && status < 400)
    throw new GitTransportError(url, `HTTP ${status}: redirects are not followed`, status);
  throw new GitTransportError(url, `HTTP ${status}`, status);
}

async function* once(bytes: Uint8Array): AsyncIterableIterator<Uint8Array> {
  yield bytes;
}

const FLUSH = Symbol('flush');
const DELIM = Symbol('delim');
const RESPONSE_END = Symbol('response-end');
const FLUSH_BYTES = Buffer.from('0000');
const DELIM_BYTES = Buffer.from('0001');

function pkt(line: string): Buffer {
  const bytes = Buffer.from(line, 'utf8');
  return Buffer.concat([Buffer.from((bytes.length + 4).toString(16).padStart(4, '0')), bytes]);
}

function text(packet: Uint8Array): string {
  const line = Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength).toString('utf8');
  return line.endsWith('\n') ? line.slice(0, -1) : line;
}

/** pkt-lines read from a body: a packet's payload, a special packet, or `end` when the body ends on a boundary. */
class PktReader {
  private buffered: Buffer = Buffer.alloc(0);
  /** Bytes of payload read so far outside side band 1, for the response's line cap. */
  lineBytes = 0;

  constructor(
    private readonly body: AsyncIterableIterator<Uint8Array> | undefined,
    private readonly url: string,
  ) {}

  async next(): Promise<Uint8Array | typeof FLUSH | typeof DELIM | typeof RESPONSE_END | 'end'> {
    for (;;) {
      if (this.buffered.length >= 4) {
        const head = this.buffered.toString('latin1', 0, 4);
        if (!/^[0-9a-f]{4}$/.test(head))
          throw new GitTransportError(this.url, 'the server does not speak git (not a pkt-line)');
        const length = Number.parseInt(head, 16);
        if (length < 4) {
          this.buffered = this.buffered.subarray(4);
          if (length === 0) return FLUSH;
          if (length === 1) return DELIM;
          if (length === 2) return RESPONSE_END;
          throw new GitTransportError(this.url, 'the server sent a malformed pkt-line');
        }
        if (length > PKT_MAX + 4) throw new GitTransportError(this.url, 'the server sent a pkt-line over 65520 bytes');
        if (this.buffered.length >= length) {
          const payload = this.buffered.subarray(4, length);
          this.buffered = this.buffered.subarray(length);
          if (payload[0] !== 1) this.lineBytes += payload.length;
          return payload;
        }
      }
      const step = this.body ? await this.body.next() : { done: true as const, value: undefined };
      if (step.done) {
        if (this.buffered.length > 0) throw new GitTransportError(this.url, 'the response ended inside a pkt-line');
        return 'end';
      }
      const chunk = Buffer.from(step.value.buffer, step.value.byteOffset, step.value.byteLength);
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    }
  }

  /** Drops the rest of the body, closing the connection if it is still open. */
  async close(): Promise<void> {
    await Promise.resolve(this.body?.return?.()).catch(() => undefined);
  }
}
