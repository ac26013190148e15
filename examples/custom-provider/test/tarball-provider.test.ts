import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openContentStore } from '@agentproto/content-cache';
import {
  createRegistry,
  localSandbox,
  prepareSkills,
  type SecretReader,
  type SkillDeclaration,
} from '@agentproto/skill-providers';
import { tarballProvider, type TarballProviderOptions } from '../src/index.js';
import { type TarEntry, pinOf, skillPack, tarGz } from './support/archive.js';
import { startArchiveServer } from './support/server.js';
import { tempDir } from './support/temp.js';

const TOKEN_NAME = 'acme-skills-token';

async function setup(options: TarballProviderOptions = {}) {
  const server = await startArchiveServer();
  const privateRoot = await tempDir();
  const cache = await openContentStore({ root: join(await tempDir(), 'store') });
  const registry = createRegistry([tarballProvider({ tokenSecretNames: [TOKEN_NAME], ...options })]);
  const sandbox = localSandbox({ privateRoot });
  return { server, cache, registry, sandbox, privateRoot };
}

const entry = (source: string, version: string, extra: Record<string, unknown> = {}) => ({
  provider: 'tarball',
  source,
  version,
  path: 'skills/review',
  name: 'review',
  ...extra,
});

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('expected a rejection'),
    (error: unknown) => error,
  );

/** Everything a caller could print of a value: message, stack, causes, fields, JSON. */
function everythingIn(value: unknown): string {
  const parts = [inspect(value, { depth: Infinity, showHidden: true })];
  try {
    parts.push(JSON.stringify(value) ?? '');
  } catch {
    // a value JSON cannot hold is covered by inspect
  }
  for (
    let error = value as { message?: unknown; stack?: unknown; cause?: unknown; original?: unknown } | undefined;
    error;
    error = error.cause as typeof error
  ) {
    parts.push(String(error.message), String(error.stack));
    if (error.original !== undefined) parts.push(everythingIn(error.original));
  }
  return parts.join('\n');
}

describe('the tarball provider', () => {
  it('prepares the selected directory of a pinned archive; the next preparation is a hit that still asks the server', async () => {
    const { server, cache, registry, sandbox } = await setup();
    const archive = await tarGz(skillPack());
    const pin = pinOf(archive);
    const url = server.serve('/pack-1.2.0.tar.gz', { body: archive });

    const [first] = await prepareSkills([entry(url, pin)], { cache, registry, sandbox });
    expect(first).toMatchObject({
      name: 'review',
      provider: 'tarball',
      version: pin,
      contentId: `${pin}:skills/review`,
      hit: false,
    });
    expect(await readFile(join(first!.dir, 'SKILL.md'), 'utf8')).toContain('# Review');
    expect((await lstat(join(first!.dir, 'scripts/check.sh'))).mode & 0o777).toBe(0o755);
    // Only the selected directory, relative to it.
    expect((await readdir(first!.dir)).sort()).toEqual(['SKILL.md', 'scripts']);
    expect([server.count('HEAD'), server.count('GET')]).toEqual([1, 1]);

    const [second] = await prepareSkills([entry(url, pin)], { cache, registry, sandbox });
    expect(second).toEqual({ ...first, hit: true, from: 'store' });
    // Resolution ran again (the authorization check); nothing was downloaded.
    expect([server.count('HEAD'), server.count('GET')]).toEqual([2, 1]);
  });

  it('shares a tree only within one URL: a mirror serving the same archive downloads it, and the selected path stays in the content id', async () => {
    const { server, cache, registry, sandbox } = await setup();
    const archive = await tarGz([...skillPack(), { name: 'skills/lint/SKILL.md', body: '# Lint\n' }]);
    const pin = pinOf(archive);
    const primary = server.serve('/pack.tar.gz', { body: archive });
    const mirror = server.serve('/mirror/pack.tar.gz', { body: archive });
    const [review, lint, mirrored] = await prepareSkills(
      [
        entry(primary, pin),
        entry(primary, pin, { path: 'skills/lint', name: 'lint' }),
        entry(mirror, pin, { name: 'review-mirror' }),
      ],
      { cache, registry, sandbox, concurrency: 1 },
    );
    expect(lint!.contentId).toBe(`${pin}:skills/lint`);
    expect(mirrored!.contentId).toBe(review!.contentId);
    expect(await readFile(join(lint!.dir, 'SKILL.md'), 'utf8')).toBe('# Lint\n');
    // The same content id from another URL proves nothing about who may have the content
    // (anyone can name a digest): the store shares objects only within one source, so the
    // mirror is authorized (HEAD) and its own archive downloaded and checked (GET).
    expect(server.requests.filter((r) => r.path === '/mirror/pack.tar.gz').map((r) => r.method)).toEqual([
      'HEAD',
      'GET',
    ]);
    expect((await cache.list()).objects).toHaveLength(3);
  });

  it('refuses an archive that is not the pinned one, before extracting anything, and publishes nothing', async () => {
    const { server, cache, registry, sandbox, privateRoot } = await setup();
    const url = server.serve('/pack.tar.gz', { body: await tarGz(skillPack()) });
    const otherPin = pinOf(await tarGz([{ name: 'skills/review/SKILL.md', body: '# Another\n' }]));
    const failure = await failureOf(prepareSkills([entry(url, otherPin)], { cache, registry, sandbox }));
    expect(failure).toMatchObject({ code: 'SKILL_CONTENT_MISMATCH', phase: 'fetch', entry: { name: 'review' } });
    expect(server.count('GET')).toBe(1);
    expect((await cache.list()).objects).toEqual([]);
    expect(await readdir(join(cache.root, 'staging'))).toEqual([]);
    expect(await readdir(privateRoot)).toEqual([]);
  });

  describe('bearer tokens', () => {
    const RIGHT = `canary-right-${randomBytes(12).toString('hex')}`;
    const WRONG = `canary-wrong-${randomBytes(12).toString('hex')}`;

    async function tokenSetup() {
      const context = await setup();
      const archive = await tarGz(skillPack());
      const url = context.server.serve('/private/pack.tar.gz', { body: archive, token: RIGHT });
      return { ...context, archive, pin: pinOf(archive), url };
    }

    const secrets =
      (value: string | undefined): SecretReader =>
      (name) =>
        name === TOKEN_NAME ? value : undefined;

    it('sends the token from the named secret and prepares with the right one', async () => {
      const { server, cache, registry, sandbox, url, pin } = await tokenSetup();
      const prepared = await prepareSkills([entry(url, pin, { config: { token_secret_name: TOKEN_NAME } })], {
        cache,
        registry,
        sandbox,
        secrets: secrets(RIGHT),
      });
      expect(prepared[0]!.hit).toBe(false);
      expect(server.requests.map((r) => [r.method, r.authorization])).toEqual([
        ['HEAD', `Bearer ${RIGHT}`],
        ['GET', `Bearer ${RIGHT}`],
      ]);
      expect(everythingIn(prepared)).not.toContain(RIGHT);
    });

    it('fails with SKILL_AUTH_FAILED for a wrong token, also when the skill is already in the store', async () => {
      const { server, cache, registry, sandbox, url, pin } = await tokenSetup();
      const declaration = [entry(url, pin, { config: { token_secret_name: TOKEN_NAME } })];
      await prepareSkills(declaration, { cache, registry, sandbox, secrets: secrets(RIGHT) });
      // The token was revoked (replaced) after the skill was cached: the hit is refused too.
      const failure = await failureOf(
        prepareSkills(declaration, { cache, registry, sandbox, secrets: secrets(WRONG) }),
      );
      expect(failure).toMatchObject({
        code: 'SKILL_AUTH_FAILED',
        phase: 'resolve',
        cause: { status: 403, tokenSecretName: TOKEN_NAME },
      });
      expect(server.requests.at(-1)).toMatchObject({ method: 'HEAD', authorization: `Bearer ${WRONG}` });
      expect(everythingIn(failure)).not.toContain(WRONG);
      expect(everythingIn(failure)).not.toContain(RIGHT);
    });

    it('fails with SKILL_AUTH_FAILED when no token is configured for a private archive', async () => {
      const { server, cache, registry, sandbox, url, pin } = await tokenSetup();
      const failure = await failureOf(
        prepareSkills([entry(url, pin)], { cache, registry, sandbox, secrets: secrets(RIGHT) }),
      );
      expect(failure).toMatchObject({ code: 'SKILL_AUTH_FAILED', cause: { status: 401, tokenSecretName: undefined } });
      expect(server.requests).toEqual([{ method: 'HEAD', path: '/private/pack.tar.gz', authorization: undefined }]);
      expect(everythingIn(failure)).not.toContain(RIGHT);
    });

    it('fails with SKILL_SECRET_MISSING, before any request, when the named secret has no value', async () => {
      const { server, cache, registry, sandbox, url, pin } = await tokenSetup();
      const failure = await failureOf(
        prepareSkills([entry(url, pin, { config: { token_secret_name: TOKEN_NAME } })], {
          cache,
          registry,
          sandbox,
          secrets: secrets(undefined),
        }),
      );
      expect(failure).toMatchObject({ code: 'SKILL_SECRET_MISSING', phase: 'resolve' });
      expect(server.requests).toEqual([]);
    });

    it('keeps the token out of errors that happen after authorization (a wrong pin) and of a token that cannot be sent', async () => {
      const { cache, registry, sandbox, url } = await tokenSetup();
      const declaration = [entry(url, pinOf(Buffer.from('not this')), { config: { token_secret_name: TOKEN_NAME } })];
      const mismatch = await failureOf(
        prepareSkills(declaration, { cache, registry, sandbox, secrets: secrets(RIGHT) }),
      );
      expect(mismatch).toMatchObject({ code: 'SKILL_CONTENT_MISMATCH' });
      expect(everythingIn(mismatch)).not.toContain(RIGHT);

      const broken = `${RIGHT}\r\nx-injected: 1`;
      const invalid = await failureOf(
        prepareSkills(declaration, { cache, registry, sandbox, secrets: secrets(broken) }),
      );
      expect(invalid).toMatchObject({ code: 'SKILL_SECRET_INVALID' });
      expect(everythingIn(invalid)).not.toContain(RIGHT);
    });
  });

  describe('archive entries', () => {
    async function prepareArchive(entries: TarEntry[], path = 'skills/review') {
      const { server, cache, registry, sandbox, privateRoot } = await setup();
      const archive = await tarGz(entries);
      const url = server.serve('/pack.tar.gz', { body: archive });
      const outcome = await prepareSkills([entry(url, pinOf(archive), { path })], { cache, registry, sandbox }).then(
        (prepared) => ({ prepared, failure: undefined }),
        (failure: unknown) => ({ prepared: undefined, failure }),
      );
      return { ...outcome, cache, privateRoot };
    }

    const refused: Array<[string, TarEntry[]]> = [
      ['a name that climbs out with ..', [...skillPack(), { name: '../x', body: 'escaped' }]],
      ['.. inside the selected directory', [...skillPack(), { name: 'skills/review/../../x', body: 'escaped' }]],
      ['an absolute name', [...skillPack(), { name: '/tmp/agentproto-tarball-escape', body: 'escaped' }]],
      [
        'a symbolic link to outside the selected directory',
        [...skillPack(), { name: 'skills/review/shared', type: 'symlink', linkname: '../other/SKILL.md' }],
      ],
      [
        'a symbolic link to an absolute path',
        [...skillPack(), { name: 'skills/review/passwd', type: 'symlink', linkname: '/etc/passwd' }],
      ],
      [
        'a hard link to a file outside the selected directory',
        [...skillPack(), { name: 'skills/review/other', type: 'link', linkname: 'skills/other/SKILL.md' }],
      ],
      [
        'a file written through a link that stays inside',
        [
          ...skillPack(),
          { name: 'skills/review/here', type: 'symlink', linkname: '.' },
          { name: 'skills/review/here/x', body: 'through the link' },
        ],
      ],
      ['a character device', [...skillPack(), { name: 'skills/review/null', type: 'character-device' }]],
      ['a fifo', [...skillPack(), { name: 'skills/review/pipe', type: 'fifo' }]],
      ['a second entry for the same file', [...skillPack(), { name: 'skills/review/SKILL.md', body: '# Replaced\n' }]],
    ];

    it.each(refused)('refuses %s and publishes nothing', async (_, entries) => {
      const { failure, cache, privateRoot } = await prepareArchive(entries);
      // The provider's own refusal (the store's would carry reason CACHE_UNSAFE_TREE).
      expect(failure).toMatchObject({
        code: 'SKILL_UNSAFE_TREE',
        reason: 'SKILL_UNSAFE_TREE',
        phase: 'fetch',
        entry: { name: 'review' },
      });
      expect((await cache.list()).objects).toEqual([]);
      expect(await readdir(join(cache.root, 'staging'))).toEqual([]);
      expect(await readdir(privateRoot)).toEqual([]);
      expect(existsSync('/tmp/agentproto-tarball-escape')).toBe(false);
    });

    it('keeps a symbolic link that stays inside the selected directory, and copies a hard link to a file in it', async () => {
      const { prepared, failure } = await prepareArchive([
        ...skillPack(),
        { name: 'skills/review/docs/guide.md', body: 'guide' },
        { name: 'skills/review/GUIDE.md', type: 'symlink', linkname: 'docs/guide.md' },
        { name: 'skills/review/docs/copy.md', type: 'link', linkname: 'skills/review/docs/guide.md' },
      ]);
      expect(failure).toBeUndefined();
      const dir = prepared![0]!.dir;
      expect(await readlink(join(dir, 'GUIDE.md'))).toBe('docs/guide.md');
      expect(await readFile(join(dir, 'docs/copy.md'), 'utf8')).toBe('guide');
    });

    it('reports SKILL_MD_MISSING when the selected directory has no SKILL.md', async () => {
      const { failure, cache } = await prepareArchive([{ name: 'skills/review/README.md', body: 'no skill file' }]);
      expect(failure).toMatchObject({ code: 'SKILL_MD_MISSING', entry: { name: 'review' } });
      expect((await cache.list()).objects).toEqual([]);
    });

    it('reports SKILL_NOT_FOUND when the archive has no such directory', async () => {
      const { failure } = await prepareArchive(skillPack(), 'skills/absent');
      expect(failure).toMatchObject({
        code: 'SKILL_NOT_FOUND',
        phase: 'fetch',
        cause: { path: 'skills/absent', found: 'missing' },
      });
    });
  });

  describe('validation', () => {
    const pin = `sha256:${'a'.repeat(64)}`;

    const rejected: Array<[string, (url: string) => Record<string, unknown>, string]> = [
      [
        'an unknown config option',
        (url) => entry(url, pin, { config: { token_secret_name: TOKEN_NAME, strip_components: 1 } }),
        'SKILL_CONFIG_INVALID',
      ],
      [
        'a secret name the host did not approve',
        (url) => entry(url, pin, { config: { token_secret_name: 'other-token' } }),
        'SKILL_CREDENTIAL_NOT_APPROVED',
      ],
      [
        'a secret name that is not a plain name',
        (url) => entry(url, pin, { config: { token_secret_name: '../token' } }),
        'SKILL_CONFIG_INVALID',
      ],
      ['a version that is not a sha256 pin', (url) => entry(url, 'v1.2.0'), 'SKILL_CONFIG_INVALID'],
      [
        'a pin in upper case',
        (url) => entry(url, pin.toUpperCase().replace('SHA256', 'sha256')),
        'SKILL_CONFIG_INVALID',
      ],
      ['a short pin', (url) => entry(url, 'sha256:abc123'), 'SKILL_CONFIG_INVALID'],
      ['a query in the URL', (url) => entry(`${url}?X-Amz-Signature=abc`, pin), 'SKILL_CONFIG_INVALID'],
      [
        'plain http to a host that is not loopback',
        () => entry('http://skills.example.com/pack.tar.gz', pin),
        'SKILL_CONFIG_INVALID',
      ],
      ['another scheme', () => entry('ftp://127.0.0.1/pack.tar.gz', pin), 'SKILL_CONFIG_INVALID'],
    ];

    it.each(rejected)('rejects %s before any request and before reading any secret', async (_, make, code) => {
      const { server, cache, registry, sandbox } = await setup();
      const url = server.serve('/pack.tar.gz', { body: await tarGz(skillPack()) });
      const read: string[] = [];
      const secrets: SecretReader = (name) => {
        read.push(name);
        return 'token';
      };
      // A valid entry first: validation of the whole declaration comes before any resolution.
      const failure = await failureOf(
        // make() builds entries a host cannot type (the point of the test): cast, as a host casts JSON.
        prepareSkills([entry(url, pin, { name: 'first' }), make(url) as unknown as SkillDeclaration], {
          cache,
          registry,
          sandbox,
          secrets,
        }),
      );
      expect(failure).toMatchObject({ code, phase: 'validate', entry: { index: 1 } });
      expect(server.requests).toEqual([]);
      expect(read).toEqual([]);
    });

    it('names the URL host (with its port) as the only egress host', () => {
      const provider = tarballProvider();
      const source = { provider: 'tarball', version: `sha256:${'0'.repeat(64)}`, path: '', name: 'x', config: {} };
      expect(provider.egressHosts({ ...source, source: 'https://skills.example.com/pack-1.2.0.tar.gz' })).toEqual([
        'skills.example.com',
      ]);
      expect(provider.egressHosts({ ...source, source: 'https://skills.example.com:8443/pack.tar.gz' })).toEqual([
        'skills.example.com:8443',
      ]);
      expect(provider.egressHosts({ ...source, source: 'https://skills.example.com:443/pack.tar.gz' })).toEqual([
        'skills.example.com',
      ]);
    });
  });

  it('refuses a redirect, which would leave the declared host', async () => {
    const { server, cache, registry, sandbox } = await setup();
    const url = server.serve('/pack.tar.gz', {
      body: Buffer.alloc(0),
      redirectTo: 'https://cdn.example.net/pack.tar.gz',
    });
    const failure = await failureOf(
      prepareSkills([entry(url, `sha256:${'a'.repeat(64)}`)], { cache, registry, sandbox }),
    );
    expect(failure).toMatchObject({ code: 'TARBALL_HTTP_FAILED', phase: 'resolve', cause: { status: 302 } });
  });

  it('reports a missing archive as SKILL_NOT_FOUND', async () => {
    const { server, cache, registry, sandbox } = await setup();
    const failure = await failureOf(
      prepareSkills([entry(`${server.origin}/absent.tar.gz`, `sha256:${'a'.repeat(64)}`)], {
        cache,
        registry,
        sandbox,
      }),
    );
    expect(failure).toMatchObject({ code: 'SKILL_NOT_FOUND', phase: 'resolve', cause: { status: 404 } });
  });

  it('stops a download larger than maxArchiveBytes', async () => {
    const { server, cache, registry, sandbox } = await setup({ maxArchiveBytes: 1024 });
    const archive = await tarGz([...skillPack(), { name: 'skills/review/blob', body: randomBytes(64 * 1024) }]);
    const url = server.serve('/pack.tar.gz', { body: archive });
    const failure = await failureOf(prepareSkills([entry(url, pinOf(archive))], { cache, registry, sandbox }));
    expect(failure).toMatchObject({ code: 'TARBALL_TOO_LARGE', phase: 'fetch' });
  });

  it('stops an archive that unpacks past maxUnpackedBytes', async () => {
    const { server, cache, registry, sandbox } = await setup({ maxUnpackedBytes: 64 * 1024 });
    // Zeros: a few hundred bytes compressed, a megabyte unpacked.
    const archive = await tarGz([...skillPack(), { name: 'skills/review/zeros', body: Buffer.alloc(1024 * 1024) }]);
    expect(archive.length).toBeLessThan(16 * 1024);
    const url = server.serve('/pack.tar.gz', { body: archive });
    const failure = await failureOf(prepareSkills([entry(url, pinOf(archive))], { cache, registry, sandbox }));
    expect(failure).toMatchObject({ code: 'TARBALL_TOO_LARGE', phase: 'fetch' });
    expect((await cache.list()).objects).toEqual([]);
  });

  it('cancelled during the download: SKILL_ABORTED, nothing published, no private folder left', async () => {
    const { server, cache, registry, sandbox, privateRoot } = await setup();
    // Random data does not compress: the archive is as large as its content.
    const archive = await tarGz([
      ...skillPack(),
      { name: 'skills/review/data.bin', body: randomBytes(2 * 1024 * 1024) },
    ]);
    const url = server.serve('/pack.tar.gz', { body: archive, stallAfter: 256 * 1024 });
    const controller = new AbortController();
    const stages: string[] = [];
    const preparing = prepareSkills([entry(url, pinOf(archive))], {
      cache,
      registry,
      sandbox,
      signal: controller.signal,
      onProgress: (event) => stages.push(event.type),
    });
    await server.stalled();
    // The private folder holds the partial download at this point (beside it, its owner record).
    expect((await readdir(privateRoot)).filter((name) => !name.endsWith('.owner'))).toHaveLength(1);
    controller.abort(new Error('user cancelled'));
    const failure = await failureOf(preparing);
    expect(failure).toMatchObject({ code: 'SKILL_ABORTED', entry: { name: 'review' } });
    expect(stages).toEqual(['resolved', 'fetch-start']);
    expect((await cache.list()).objects).toEqual([]);
    expect(await readdir(join(cache.root, 'staging'))).toEqual([]);
    expect(await readdir(privateRoot)).toEqual([]);
  });
});
