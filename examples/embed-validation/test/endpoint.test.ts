import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startValidationServer } from '../src/index.js';
import { entriesOf, tarGz } from './support/archive.js';
import { post } from './support/http.js';
import { startTestServer } from './support/server.js';

/** The Agent Plugins package's golden 1.1.0 plugin: it loads without a single finding. */
const GOLDEN = fileURLToPath(new URL('../../../packages/agent-plugins/test/golden/1.1.0', import.meta.url));
const SCHEMA = 'https://agent-plugins.org/schemas/1.1.0/plugin.schema.json';

/** A plugin that loads, with one warning and a skill a client skips (two error findings). */
const flawed = () =>
  tarGz([
    { name: 'plugin.json', body: JSON.stringify({ $schema: SCHEMA, name: 'acme.tools', colour: 'blue' }) },
    { name: 'skills/review/SKILL.md', body: '---\nname: other\n---\n# Review\n' },
  ]);

describe('POST /validate', () => {
  it('answers 200 and ok for a valid plugin, with its skills and servers', async () => {
    const server = await startTestServer();
    const answer = await post(`${server.url}/validate`, await tarGz(await entriesOf(GOLDEN)));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.body).toMatchObject({
      ok: true,
      spec: '1.1.0',
      rejected: false,
      findings: [],
      skills: ['release', 'review'],
      servers: ['acme-docs', 'acme-index'],
      root: '',
    });
    expect(await server.leftovers()).toEqual({ tempRoot: [], base: ['tmp'] });
  });

  it('validates the single top folder of an archive made with `tar czf x.tar.gz acme.tools/`', async () => {
    const server = await startTestServer();
    const answer = await post(
      `${server.url}/validate`,
      await tarGz([{ name: 'acme.tools/', type: 'directory' }, ...(await entriesOf(GOLDEN, 'acme.tools/'))]),
    );
    expect(answer.body).toMatchObject({ ok: true, root: 'acme.tools', skills: ['release', 'review'] });
  });

  it('answers 200 and not ok for a plugin with error findings, each with its code, severity and path', async () => {
    const server = await startTestServer();
    const answer = await post(`${server.url}/validate`, await flawed());
    expect(answer.status).toBe(200);
    expect(answer.body.ok).toBe(false);
    expect(answer.body.rejected).toBe(false);
    expect(
      answer.body.findings.map(({ code, severity, path }: Record<string, string>) => ({ code, severity, path })),
    ).toEqual([
      { code: 'plugin.unknown-field', severity: 'warning', path: 'plugin.json#/colour' },
      { code: 'skill.description-missing', severity: 'error', path: 'skills/review/SKILL.md#/frontmatter/description' },
      { code: 'skill.name-mismatch', severity: 'error', path: 'skills/review/SKILL.md#/frontmatter/name' },
    ]);
    for (const finding of answer.body.findings)
      expect(finding).toEqual({
        code: expect.any(String),
        rule: expect.stringMatching(/^AR9O\d$/),
        severity: expect.any(String),
        path: expect.any(String),
        message: expect.any(String),
      });
    expect(await server.leftovers()).toEqual({ tempRoot: [], base: ['tmp'] });
  });

  it.each([
    ['no plugin.json', [{ name: 'README.md', body: '# hi\n' }], 'plugin.missing'],
    ['plugin.json that is not JSON', [{ name: 'plugin.json', body: '{ nope' }], 'plugin.not-json'],
    [
      'an invalid plugin name',
      [{ name: 'plugin.json', body: JSON.stringify({ $schema: SCHEMA, name: 'Not Valid!' }) }],
      'plugin.name-invalid',
    ],
    ['an empty archive', [], 'plugin.missing'],
  ])('rejects a plugin with %s', async (_case, entries, code) => {
    const server = await startTestServer();
    const answer = await post(`${server.url}/validate`, await tarGz(entries));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      ok: false,
      rejected: true,
      findings: [expect.objectContaining({ code, severity: 'error' })],
    });
  });

  it("never names the server's temp folder in an answer", async () => {
    const server = await startTestServer();
    for (const body of [await flawed(), await tarGz([{ name: '../x', body: '' }]), Buffer.from('not gzip')]) {
      const answer = await post(`${server.url}/validate`, body);
      expect(JSON.stringify(answer.body)).not.toContain(server.base);
    }
  });

  it('listens on the port it is given, on 127.0.0.1, and says so when the port is taken', async () => {
    const server = await startTestServer();
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    await expect(startValidationServer({ port: server.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('answers 404 elsewhere and 405 to other methods', async () => {
    const server = await startTestServer();
    expect(await post(`${server.url}/other`, Buffer.alloc(0))).toMatchObject({
      status: 404,
      body: { error: { code: 'NOT_FOUND' } },
    });
    const get = await post(`${server.url}/validate`, Buffer.alloc(0), { method: 'PUT' });
    expect(get).toMatchObject({
      status: 405,
      headers: { allow: 'POST' },
      body: { error: { code: 'METHOD_NOT_ALLOWED' } },
    });
  });

  it('answers concurrent requests each with its own result, and leaves nothing behind', async () => {
    const server = await startTestServer({ maxConcurrent: 3 });
    const golden = await tarGz(await entriesOf(GOLDEN));
    const bad = await flawed();
    const unsafe = await tarGz([
      { name: 'plugin.json', body: '{}' },
      { name: '../../escape', body: 'x' },
    ]);
    const bodies = Array.from({ length: 24 }, (_, i) => [golden, bad, unsafe][i % 3]!);
    const answers = await Promise.all(bodies.map((body) => post(`${server.url}/validate`, body)));
    answers.forEach((answer, i) => {
      if (i % 3 === 0) expect(answer.body).toMatchObject({ ok: true, skills: ['release', 'review'] });
      if (i % 3 === 1) expect(answer.body).toMatchObject({ ok: false, rejected: false });
      if (i % 3 === 2)
        expect(answer).toMatchObject({ status: 400, body: { error: { reason: 'dot-dot', entry: '../../escape' } } });
    });
    expect(await server.leftovers()).toEqual({ tempRoot: [], base: ['tmp'] });
  });
});
