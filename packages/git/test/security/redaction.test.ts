import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, renderings, tempDir } from '@agentproto/testkit';
import {
  directoryTree,
  expandCommit,
  fetchDirectory,
  isomorphicGitEngine,
  listRefs,
  systemGitEngine,
  type GitAuth,
  type GitEngine,
} from '../../src/index.js';
import { secretsOf } from '../../src/credentials.js';
import { scrubError } from '../../src/redact.js';
import { rejection, scratch, serve } from '../support/fixtures.js';

/**
 * Whether `text` shows `canary` in any form a reader could turn back into it: as is, after
 * decoding percent escapes (upper or lower case), or inside any run of base64 (standard or
 * URL-safe, at any alignment). Written independently of the code under test: it decodes
 * what it finds rather than listing encodings.
 */
function reveals(text: string, canary: string): boolean {
  if (text.includes(canary)) return true;
  const unescaped = text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return Buffer.from(run.replace(/%/g, ''), 'hex').toString('latin1');
    }
  });
  if (unescaped.includes(canary) || unescaped.replace(/\+/g, ' ').includes(canary)) return true;
  for (const run of text.match(/[A-Za-z0-9+/_-]{8,}/g) ?? []) {
    for (let offset = 0; offset < 4; offset += 1) {
      const standard = run.slice(offset).replace(/-/g, '+').replace(/_/g, '/');
      if (Buffer.from(standard, 'base64').toString('latin1').includes(canary)) return true;
    }
  }
  return false;
}

/** Every way the error can be printed: util.inspect at any depth (hidden fields too), JSON, messages, stacks, causes. */
function printed(error: unknown): string[] {
  return [inspect(error, { depth: null }), inspect(error, { depth: null, showHidden: true }), ...renderings(error)];
}

function basic(user: string, password: string): GitAuth {
  return () => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}` });
}

const engines: Array<[string, () => GitEngine]> = [
  ['isomorphic-git', () => isomorphicGitEngine()],
  ['system git', () => systemGitEngine()],
  ['system git, HTTP in-process', () => systemGitEngine({ httpInProcess: true })],
];

type Sent = { authorization: string | undefined; user?: string; password?: string };

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('credentials a server echoes back never survive in an error, in any form', () => {
  const canary = `Cnry${randomBytes(8).toString('hex')}`;
  const tokenAsUser = basic(`ghp_${canary}`, '');
  const oddPassword = basic('alice', `p@ss/w:rd ${canary}+%!*é`);
  // Each server says back one form only: the form the old redaction missed must not be
  // hidden by another it caught (a cause holding any caught form was replaced whole).
  const cases: Array<[string, GitAuth, (sent: Sent) => string]> = [
    [
      'a token sent as the user name, echoed as the user',
      tokenAsUser,
      (sent) => `user ${sent.user} is not allowed here`,
    ],
    [
      'a token sent as the user name with a placeholder password, echoed as the user',
      basic(`ghp_${canary}`, 'x-oauth-basic'),
      (sent) => `unknown user: ${sent.user}`,
    ],
    [
      'a password echoed percent-encoded, as in a URL',
      oddPassword,
      (sent) => `tried https://${sent.user}:${encodeURIComponent(sent.password ?? '')}@host/`,
    ],
    [
      'a password echoed percent-encoded with lower-case hex',
      oddPassword,
      (sent) => `pw=${encodeURIComponent(sent.password ?? '').replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())}`,
    ],
    [
      'a password echoed form-encoded',
      oddPassword,
      (sent) => `password=${encodeURIComponent(sent.password ?? '').replace(/%20/g, '+')}`,
    ],
    [
      'a password echoed as base64 alone',
      basic('alice', `${canary}pw`),
      (sent) => `password digest input: ${b64(sent.password ?? '')}`,
    ],
    [
      'a password echoed as URL-safe base64 without padding',
      basic('alice', `${canary}pw?>`),
      (sent) =>
        `pw ${b64(sent.password ?? '')
          .replace(/=+$/, '')
          .replace(/\+/g, '-')
          .replace(/\//g, '_')}`,
    ],
    ['a token sent as the user name, echoed as base64 alone', tokenAsUser, (sent) => `who: ${b64(sent.user ?? '')}`],
    [
      'user:password echoed as base64 without padding',
      basic('alice', `${canary}xy`),
      (sent) => `credential ${b64(`${sent.user}:${sent.password}`).replace(/=+$/, '')}`,
    ],
    [
      'a bearer token echoed as base64',
      () => ({ Authorization: `Bearer ${canary}` }),
      (sent) => `token ${b64((sent.authorization ?? '').slice('Bearer '.length))}`,
    ],
    [
      'a bearer token echoed JSON-escaped',
      () => ({ Authorization: `Bearer ${canary}"\\q` }),
      (sent) => JSON.stringify({ token: (sent.authorization ?? '').slice('Bearer '.length) }),
    ],
  ];

  let root: string;
  let commit: string;
  let removeRoot: () => Promise<void>;
  beforeAll(async () => {
    // Kept for the whole file (scratch folders go after each test).
    const dir = await tempDir('agentproto-git-redaction-');
    root = dir.path;
    removeRoot = dir.cleanup;
    commit = (await makeRepo({ root, name: 'private.git', commits: [{ files: { 'skills/a/SKILL.md': 'a' } }] }))
      .commits[0] as string;
  });
  afterAll(() => removeRoot());

  // git prints the text/plain body of a refused request, except for a 401 (it then says it
  // could not ask for a user name), so system git meets the echo on a 403.
  for (const [engineName, engine, status] of [
    ...engines.slice(0, 1).map(([n, e]) => [n, e, 401] as const),
    ...engines.map(([n, e]) => [n, e, 403] as const),
  ]) {
    it.each(cases)(`${engineName}, HTTP ${status}: %s`, async (_what, auth, text) => {
      const server = await serve({
        root,
        auth: { username: 'alice', password: 'the-right-one' },
        echoCredentials: { status, text },
      });
      const url = server.urlFor('private.git');
      const work = await scratch();
      const options = { auth, engine: engine(), privateDir: work };
      const errors = [
        await rejection(listRefs(url, options)),
        await rejection(fetchDirectory(url, commit, 'skills/a', join(work, 'out'), options)),
      ];
      expect(server.stats.log.some((entry) => entry.status === status)).toBe(true);
      for (const error of errors) {
        expect(error).toMatchObject({ code: 'GIT_AUTH_FAILED', status });
        for (const rendering of printed(error))
          expect(reveals(rendering, canary), rendering.slice(0, 2000)).toBe(false);
      }
    });
  }

  it('directoryTree and expandCommit are scrubbed the same way', async () => {
    const server = await serve({
      root,
      auth: { username: 'alice', password: 'the-right-one' },
      echoCredentials: { status: 403, text: (sent) => `user ${sent.user}` },
    });
    const url = server.urlFor('private.git');
    for (const [, engine] of engines) {
      const options = { auth: tokenAsUser, engine: engine(), privateDir: await scratch() };
      for (const error of [
        await rejection(directoryTree(url, commit, 'skills/a', options)),
        await rejection(expandCommit(url, commit.slice(0, 7), options)),
      ]) {
        expect(error).toMatchObject({ code: 'GIT_AUTH_FAILED', status: 403 });
        for (const rendering of printed(error))
          expect(reveals(rendering, canary), rendering.slice(0, 2000)).toBe(false);
      }
    }
  });

  it("the echo did reach the errors: a listRefs cause (isomorphic-git) and git's stderr (system git) held it before redaction", async () => {
    const server = await serve({
      root,
      auth: { username: 'alice', password: 'the-right-one' },
      echoCredentials: { status: 403, text: (sent) => `user ${sent.user} refused` },
    });
    const url = server.urlFor('private.git');
    const system = await rejection(listRefs(url, { auth: tokenAsUser, engine: systemGitEngine() }));
    // git printed the server's sentence, which stays in the cause with the token taken out.
    expect(inspect(system, { depth: null })).toContain('user [REDACTED] refused');
    const isomorphic = await rejection(listRefs(url, { auth: tokenAsUser, engine: isomorphicGitEngine() }));
    // isomorphic-git kept the body in its error's data: the cause is a redacted copy, name and code kept.
    expect(isomorphic.cause).toMatchObject({ name: 'HttpError', code: 'HttpError' });
    for (const error of [system, isomorphic]) expect(reveals(printed(error).join('\n'), canary)).toBe(false);
  });

  it('scrubs foreign causes whose secret only util.inspect shows: Map entries, symbol keys, nested causes', () => {
    const secrets = secretsOf({ Authorization: `Basic ${b64(`user:${canary}`)}` });
    const hidden = Symbol('response');
    const deep = new Error('deep', { cause: { headers: new Map([['x-echo', b64(canary)]]) } });
    const foreign = Object.assign(new Error('outer'), {
      [hidden]: `password=${encodeURIComponent(canary)}`,
      inner: new Set([canary]),
    });
    const chained = new Error('chain', { cause: deep });
    for (const value of [foreign, chained]) {
      const scrubbed = scrubError(Object.assign(new Error('x'), { cause: value }), secrets);
      for (const text of printed(scrubbed)) expect(reveals(text, canary), text).toBe(false);
    }
  });
});
