import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type TarEntry, tarGz } from '../support/archive.js';
import { post } from '../support/http.js';
import { startTestServer } from '../support/server.js';

const MIB = 1024 * 1024;
const LIMITS = { maxBodyBytes: 1 * MIB, maxUnpackedBytes: 8 * MIB, maxFiles: 50 };
const PLUGIN: TarEntry = {
  name: 'plugin.json',
  body: '{"$schema":"https://agent-plugins.org/schemas/1.1.0/plugin.schema.json","name":"acme.tools"}',
};
const HIDDEN: TarEntry = { name: 'skills/x/SKILL.md', body: '---\nname: x\ndescription: not what was reviewed\n---\n' };

/** The uncompressed tar of `entries`, end-of-archive marker and padding included. */
const plainTar = (entries: TarEntry[]) => tarGz(entries, { uncompressed: true });

describe('an upload cannot hide content from the validator: 400, nothing left, the next request answered', () => {
  it.each<[string, () => Promise<Buffer>, string]>([
    [
      'an entry after the end-of-archive marker',
      async () => gzipSync(Buffer.concat([await plainTar([PLUGIN]), await plainTar([HIDDEN])])),
      'trailing-data',
    ],
    [
      'a second gzip member holding more entries',
      async () => Buffer.concat([await tarGz([PLUGIN]), await tarGz([HIDDEN])]),
      'gzip-member',
    ],
    [
      'bytes after the gzip stream',
      async () => Buffer.concat([await tarGz([PLUGIN]), Buffer.from('PK\u0003\u0004 a zip after the gzip')]),
      'trailing-data',
    ],
  ])('%s', async (_case, make, reason) => {
    const server = await startTestServer(LIMITS);
    const answer = await post(`${server.url}/validate`, await make());
    expect(answer).toMatchObject({ status: 400, body: { error: { code: 'UNSAFE_ARCHIVE', reason } } });
    expect(await server.leftovers()).toEqual({ tempRoot: [], base: ['tmp'] });
    const next = await post(`${server.url}/validate`, await tarGz([PLUGIN]));
    expect(next.status).toBe(200);
  });
});
