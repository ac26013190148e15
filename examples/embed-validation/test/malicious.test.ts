import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type TarEntry, type TarOptions, tarGz } from './support/archive.js';
import { post } from './support/http.js';
import { startTestServer } from './support/server.js';

const MIB = 1024 * 1024;
/** Small limits, so each attack crosses one with little data. */
const LIMITS = { maxBodyBytes: 1 * MIB, maxUnpackedBytes: 8 * MIB, maxFiles: 50 };
const PLUGIN: TarEntry = {
  name: 'plugin.json',
  body: '{"$schema":"https://agent-plugins.org/schemas/1.1.0/plugin.schema.json","name":"acme.tools"}',
};

const archive = (entries: TarEntry[], options?: TarOptions) => () => tarGz(entries, options);

describe('archives the safe reader refuses: 400 with the reason and the entry, nothing left on disk', () => {
  it.each<[string, () => Promise<Buffer>, string, string | null]>([
    ['a "../" entry', archive([PLUGIN, { name: '../evil.txt', body: 'x' }]), 'dot-dot', '../evil.txt'],
    [
      'a ".." inside a path',
      archive([PLUGIN, { name: 'skills/../../evil.txt', body: 'x' }]),
      'dot-dot',
      'skills/../../evil.txt',
    ],
    ['an absolute path', archive([PLUGIN, { name: '/tmp/evil.txt', body: 'x' }]), 'absolute-name', '/tmp/evil.txt'],
    [
      'a symbolic link out of the package',
      archive([PLUGIN, { name: 'passwd', type: 'symlink', linkname: '/etc/passwd' }]),
      'link',
      'passwd',
    ],
    [
      'a symbolic link inside the package',
      archive([PLUGIN, { name: 'again.json', type: 'symlink', linkname: 'plugin.json' }]),
      'link',
      'again.json',
    ],
    [
      'a hard link',
      archive([PLUGIN, { name: 'hard.json', type: 'link', linkname: 'plugin.json' }]),
      'link',
      'hard.json',
    ],
    ['a character device', archive([PLUGIN, { name: 'null', type: 'character-device' }]), 'special-entry', 'null'],
    ['a block device', archive([PLUGIN, { name: 'disk', type: 'block-device' }]), 'special-entry', 'disk'],
    ['a FIFO', archive([PLUGIN, { name: 'pipe', type: 'fifo' }]), 'special-entry', 'pipe'],
    ['two entries for one path', archive([PLUGIN, PLUGIN]), 'duplicate', 'plugin.json'],
    [
      'a gzip bomb: one file of 64 MiB of zeros (64 KiB compressed)',
      archive([PLUGIN, { name: 'zeros.bin', zeros: 64 * MIB }]),
      'too-large',
      'zeros.bin',
    ],
    [
      'a gzip bomb: 64 MiB of zeros after the end of the tar',
      archive([PLUGIN], { trailingZeros: 64 * MIB }),
      'too-large',
      null,
    ],
    [
      'more files than maxFiles',
      archive([PLUGIN, ...Array.from({ length: 60 }, (_, i) => ({ name: `f${i}.txt`, body: 'x' }))]),
      'too-many-files',
      'f49.txt',
    ],
    ['a body that is not gzip at all', async () => Buffer.from('this is not an archive\n'), 'malformed', null],
    ['a plain tar, not gzipped', archive([PLUGIN], { uncompressed: true }), 'malformed', null],
    [
      'a gzip stream cut in half',
      async () => (await tarGz([PLUGIN, { name: 'data.bin', body: randomBytes(64 * 1024) }])).subarray(0, 32 * 1024),
      'truncated',
      null,
    ],
    ['gzip of something that is not a tar', async () => gzipSync(randomBytes(4096)), 'malformed', null],
  ])('%s', async (_case, make, reason, entry) => {
    const server = await startTestServer(LIMITS);
    const body = await make();
    expect(body.length).toBeLessThan(LIMITS.maxBodyBytes);
    const answer = await post(`${server.url}/validate`, body);
    expect(answer).toMatchObject({ status: 400, body: { error: { code: 'UNSAFE_ARCHIVE', reason, entry } } });
    expect(answer.body.error.message).toEqual(expect.any(String));
    // Nothing in the temp root, and nothing escaped beside it.
    expect(await server.leftovers()).toEqual({ tempRoot: [], base: ['tmp'] });
  });
});

describe('bodies over the limit: 413', () => {
  /** Over the limit, but not so far that the server will not read and drop the rest to keep the connection. */
  const tooBig = () => tarGz([PLUGIN, { name: 'noise.bin', body: randomBytes(1.5 * MIB) }]);

  it('refuses on the Content-Length, and the client still reads the answer', async () => {
    const server = await startTestServer(LIMITS);
    const answer = await post(`${server.url}/validate`, await tooBig());
    expect(answer).toMatchObject({
      status: 413,
      body: { error: { code: 'BODY_TOO_LARGE', limit: LIMITS.maxBodyBytes, declared: expect.any(Number) } },
    });
    expect(await server.leftovers()).toEqual({ tempRoot: [], base: ['tmp'] });
  });

  it('refuses a chunked body (no Content-Length) once it passes the limit', async () => {
    const server = await startTestServer(LIMITS);
    const answer = await post(`${server.url}/validate`, await tooBig(), { chunked: true });
    expect(answer).toMatchObject({
      status: 413,
      body: { error: { code: 'BODY_TOO_LARGE', limit: LIMITS.maxBodyBytes, declared: null } },
    });
    expect(await server.leftovers()).toEqual({ tempRoot: [], base: ['tmp'] });
  });

  it('refuses before the body is sent when the client asks with Expect: 100-continue', async () => {
    const server = await startTestServer(LIMITS);
    const answer = await post(`${server.url}/validate`, await tooBig(), { expectContinue: true });
    expect(answer).toMatchObject({ status: 413, continued: false, headers: { connection: 'close' } });
  });

  it('takes a body under the limit sent with Expect: 100-continue or chunked', async () => {
    const server = await startTestServer(LIMITS);
    const body = await tarGz([PLUGIN]);
    for (const options of [{ expectContinue: true }, { chunked: true }]) {
      expect(await post(`${server.url}/validate`, body, options)).toMatchObject({ status: 200, body: { ok: true } });
    }
  });

  it.each([
    ['with a Content-Length', {}],
    ['chunked', { chunked: true }],
  ])('keeps serving the same connection after a refused body sent %s', async (_case, options) => {
    const server = await startTestServer(LIMITS);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const refused = await post(`${server.url}/validate`, await tooBig(), { ...options, agent });
      const next = await post(`${server.url}/validate`, await tarGz([PLUGIN]), { agent });
      expect([refused.status, next.status, next.reusedSocket]).toEqual([413, 200, true]);
    } finally {
      agent.destroy();
    }
  });
});

describe('clients that go away', () => {
  it('leaves nothing behind when the client disconnects mid-upload, and keeps serving', async () => {
    const server = await startTestServer(LIMITS);
    const socket = connect(server.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const body = await tarGz([PLUGIN]);
    socket.write(`POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${body.length}\r\n\r\n`);
    socket.write(body.subarray(0, 20));
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    expect(await post(`${server.url}/validate`, body)).toMatchObject({ status: 200, body: { ok: true } });
    expect(await server.leftovers()).toEqual({ tempRoot: [], base: ['tmp'] });
  });
});
