import { randomBytes } from 'node:crypto';
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthChallenge,
  EMPTY_JSON,
  EMPTY_JSON_MEDIA_TYPE,
  OCI_MANIFEST,
  OciClient,
  RegistryError,
  type RegistryAuth,
} from '@agentproto/oci';
import { type StoreEvent, ociRemote, openContentStore } from '@agentproto/content-cache';
import {
  type BasicAuthProxy,
  type OciRegistry,
  type RegistryTokenServer,
  renderings,
  startBasicAuthProxy,
  startOciRegistry,
  startRegistryTokenServer,
} from '@agentproto/testkit';
import { tempDir } from './support/temp.js';
import { provingEveryTree } from './support/verify.js';
import { fillWith, keyFor } from './support/trees.js';

// Every password is a canary: unique per run, with characters that URL, JSON and base64
// encodings each change, so a leak in any of those forms is caught.
const canary = (name: string) => `${name}/${randomBytes(8).toString('hex')}+=:@`;
const WRITER_PASSWORD = canary('writer');
const READER_PASSWORD = canary('reader');
const WRONG_PASSWORD = canary('wrong');
const SERVICE = 'testkit-registry';

const asWriter: RegistryAuth = () => ({ username: 'writer', password: WRITER_PASSWORD });
const asReader: RegistryAuth = () => ({ username: 'reader', password: READER_PASSWORD });
const withWrongPassword: RegistryAuth = () => ({ username: 'writer', password: WRONG_PASSWORD });

let tokenServer: RegistryTokenServer;
/** Distribution with `auth: token` pointed at tokenServer. */
let tokenRegistry: OciRegistry;
/** Distribution without auth, reachable with credentials through `proxy` only. */
let plainRegistry: OciRegistry;
let proxy: BasicAuthProxy;

beforeAll(async () => {
  tokenServer = await startRegistryTokenServer({
    users: { writer: WRITER_PASSWORD, reader: { password: READER_PASSWORD, actions: ['pull'] } },
    service: SERVICE,
    issuer: 'testkit-issuer',
  });
  [tokenRegistry, plainRegistry] = await Promise.all([
    startOciRegistry({ extraConfig: tokenServer.registryConfig() }),
    startOciRegistry(),
  ]);
  proxy = await startBasicAuthProxy({ target: plainRegistry.url, users: { writer: WRITER_PASSWORD } });
});

afterAll(async () => {
  await Promise.all([proxy?.close(), tokenRegistry?.close(), plainRegistry?.close()]);
  await tokenServer?.close();
});

function clientOf(url: string, repository: string, auth?: RegistryAuth): OciClient {
  return new OciClient({ url, repository, auth, allowInsecureHttp: true, timeoutMs: 5_000 });
}

/** A one-layer artifact under `tag`: what a store push does, in miniature. */
async function pushArtifact(client: OciClient, tag: string, layerText: string) {
  const layer = await client.pushBlob(Buffer.from(layerText));
  const config = await client.pushBlob(EMPTY_JSON);
  const manifestDigest = await client.putManifest(tag, {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    artifactType: 'application/vnd.agentproto.test.v1',
    config: { mediaType: EMPTY_JSON_MEDIA_TYPE, digest: config.digest, size: config.size },
    layers: [{ mediaType: 'application/octet-stream', digest: layer.digest, size: layer.size }],
  });
  return { layerDigest: layer.digest, manifestDigest };
}

async function failure(operation: Promise<unknown>): Promise<RegistryError> {
  const error = await operation.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RegistryError);
  return error as RegistryError;
}

function tokenRequestsFor(repository: string, from = 0) {
  return tokenServer.requests.log.slice(from).filter((entry) => entry.scope.includes(`repository:${repository}:`));
}

/** `Bearer realm="…",service="…"` → its parameters, as the registry sent them. */
function challengeParams(header: string | null): Record<string, string> {
  return Object.fromEntries([...(header ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1]!, match[2]!]));
}

describe('bearer token flow against distribution with `auth: token`', () => {
  it('pushes and pulls back with a token per scope, asked once and then reused', async () => {
    const repository = 'bearer/round-trip';
    const start = tokenServer.requests.log.length;
    const writer = clientOf(tokenRegistry.url, repository, asWriter);
    const pushed = await pushArtifact(writer, 'v1', 'layer one');
    await pushArtifact(writer, 'v2', 'layer two');
    expect(tokenRequestsFor(repository, start)).toEqual([
      // pushBlob asks whether the blob is there (pull) before it uploads (pull,push).
      { user: 'writer', scope: `repository:${repository}:pull`, service: SERVICE, status: 200 },
      { user: 'writer', scope: `repository:${repository}:pull,push`, service: SERVICE, status: 200 },
    ]);

    const afterPush = tokenServer.requests.log.length;
    const puller = clientOf(tokenRegistry.url, repository, asWriter);
    const fetched = await puller.getManifest('v1');
    expect(fetched?.digest).toBe(pushed.manifestDigest);
    expect((await puller.getBlob(pushed.layerDigest, 1024)).toString()).toBe('layer one');
    expect(await puller.hasBlob(pushed.layerDigest)).toBe(true);
    expect((await puller.listTags()).sort()).toEqual(['v1', 'v2']);
    expect(tokenRequestsFor(repository, afterPush)).toEqual([
      { user: 'writer', scope: `repository:${repository}:pull`, service: SERVICE, status: 200 },
    ]);
  });

  it('tells the auth callback the challenge the registry sent', async () => {
    const repository = 'bearer/challenge';
    // Observes, without changing, the challenges the client receives: distribution orders
    // the actions of a scope at random (`pull,push` or `push,pull`), so only the header of
    // the very response the client read can be compared.
    const sent: (string | null)[] = [];
    const observed: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (response.status === 401) sent.push(response.headers.get('www-authenticate'));
      return response;
    };
    const seen: AuthChallenge[] = [];
    const client = new OciClient({
      url: tokenRegistry.url,
      repository,
      allowInsecureHttp: true,
      fetch: observed,
      auth: (challenge) => {
        seen.push(challenge);
        return asWriter(challenge);
      },
    });
    await client.pushBlob(Buffer.from('challenge'));
    const [pullChallenge, pushChallenge] = sent.map(challengeParams);
    expect(sent).toHaveLength(2);
    expect(seen).toEqual([
      {
        registry: tokenRegistry.url,
        repository,
        scheme: 'bearer',
        realm: pullChallenge!.realm,
        service: pullChallenge!.service,
        scope: pullChallenge!.scope,
      },
      {
        registry: tokenRegistry.url,
        repository,
        scheme: 'bearer',
        realm: pushChallenge!.realm,
        service: pushChallenge!.service,
        scope: pushChallenge!.scope,
      },
    ]);
    expect(pullChallenge).toMatchObject({
      realm: tokenServer.realm,
      service: SERVICE,
      scope: `repository:${repository}:pull`,
    });
    expect(pushChallenge!.scope!.split(':')[2]!.split(',').sort()).toEqual(['pull', 'push']);
  });

  it('lets a pull-only account pull and refuses its push as REGISTRY_AUTH', async () => {
    const repository = 'bearer/read-only';
    const pushed = await pushArtifact(clientOf(tokenRegistry.url, repository, asWriter), 'v1', 'for readers');
    const start = tokenServer.requests.log.length;
    const reader = clientOf(tokenRegistry.url, repository, asReader);
    expect((await reader.getBlob(pushed.layerDigest, 1024)).toString()).toBe('for readers');

    const error = await failure(reader.pushBlob(Buffer.from('not allowed')));
    expect(error.code).toBe('REGISTRY_AUTH');
    // The token service granted what the account allows; the registry refused the rest.
    expect(tokenRequestsFor(repository, start)).toEqual([
      { user: 'reader', scope: `repository:${repository}:pull`, service: SERVICE, status: 200 },
      { user: 'reader', scope: `repository:${repository}:pull,push`, service: SERVICE, status: 200 },
    ]);
    expect(await reader.listTags()).toEqual(['v1']);
  });

  it.each([
    ['a wrong password', withWrongPassword, 1],
    ['no auth callback', undefined, 0],
    ['a callback with no credential', () => undefined, 0],
  ])('fails with REGISTRY_AUTH given %s, pulling and pushing', async (_, auth, tokenRequestsPerOperation) => {
    const repository = 'bearer/refused';
    const start = tokenServer.requests.log.length;
    const client = clientOf(tokenRegistry.url, repository, auth);
    for (const operation of [() => client.getManifest('v1'), () => client.pushBlob(Buffer.from('refused'))]) {
      const error = await failure(operation());
      expect(error.code).toBe('REGISTRY_AUTH');
      expect(error.status).toBe(401);
    }
    const asked = tokenRequestsFor(repository, start);
    expect(asked).toHaveLength(2 * tokenRequestsPerOperation);
    for (const entry of asked) expect(entry.status).toBe(401);
  });
});

describe('HTTP Basic through a reverse proxy', () => {
  it('pushes and pulls with the right credentials, the registry receiving none', async () => {
    const repository = 'basic/round-trip';
    const seen: AuthChallenge[] = [];
    const client = clientOf(proxy.url, repository, (challenge) => {
      seen.push(challenge);
      return asWriter(challenge);
    });
    const pushed = await pushArtifact(client, 'v1', 'through the proxy');
    expect((await client.getBlob(pushed.layerDigest, 1024)).toString()).toBe('through the proxy');
    expect(seen.map((challenge) => challenge.scheme)).toEqual(['basic', 'basic']);
    // What went through the proxy is in the registry behind it.
    const direct = clientOf(plainRegistry.url, repository);
    expect((await direct.getManifest('v1'))?.digest).toBe(pushed.manifestDigest);
    const forwarded = proxy.requests.log.filter(
      (entry) => entry.path.startsWith(`/v2/${repository}/`) && entry.status !== 401,
    );
    expect(forwarded.length).toBeGreaterThan(0);
    expect(new Set(forwarded.map((entry) => entry.user))).toEqual(new Set(['writer']));
  });

  it.each([
    ['a wrong password', withWrongPassword],
    ['no auth callback', undefined],
    ['a bearer token where Basic is asked', () => ({ token: 'not-basic' })],
  ])('fails with REGISTRY_AUTH given %s', async (_, auth) => {
    const client = clientOf(proxy.url, 'basic/refused', auth);
    for (const operation of [() => client.getManifest('v1'), () => client.pushBlob(Buffer.from('refused'))]) {
      const error = await failure(operation());
      expect(error.code).toBe('REGISTRY_AUTH');
      expect(error.status).toBe(401);
    }
  });
});

describe('redirects to another origin', () => {
  it('sends no Authorization to the origin a blob read is redirected to', async () => {
    const repository = 'redirect/blob';
    const pushed = await pushArtifact(clientOf(proxy.url, repository, asWriter), 'v1', 'the real blob');
    const blobPath = `/v2/${repository}/blobs/${pushed.layerDigest}`;
    proxy.redirectElsewhere(blobPath);
    try {
      const received = proxy.elsewhere.received.length;
      const error = await failure(clientOf(proxy.url, repository, asWriter).getBlob(pushed.layerDigest, 1024));
      // The other origin answered other bytes: the digest check catches them.
      expect(error.code).toBe('REGISTRY_DIGEST_MISMATCH');
      // The proxy saw the credential on the request it redirected...
      expect(
        proxy.requests.log
          .filter((entry) => entry.path === blobPath && entry.status === 307)
          .map((entry) => entry.user),
      ).toEqual(['writer']);
      // ...and the other origin got the request without it.
      const there = proxy.elsewhere.received.slice(received);
      expect(there.map((request) => request.path)).toEqual([blobPath]);
      expect(there[0]!.headers.authorization).toBeUndefined();
    } finally {
      proxy.redirectElsewhere(undefined);
    }
  });

  it("never answers another origin's challenge with the registry's credentials", async () => {
    const repository = 'redirect/challenge';
    const pushed = await pushArtifact(clientOf(proxy.url, repository, asWriter), 'v1', 'the real blob');
    const blobPath = `/v2/${repository}/blobs/${pushed.layerDigest}`;
    // The other origin asks for a bearer token from a token service of its own choosing.
    proxy.elsewhere.answerWith({
      status: 401,
      headers: { 'www-authenticate': `Bearer realm="${proxy.elsewhere.url}/token",service="elsewhere"` },
    });
    proxy.redirectElsewhere(blobPath);
    try {
      const received = proxy.elsewhere.received.length;
      const seen: AuthChallenge[] = [];
      const client = clientOf(proxy.url, repository, (challenge) => {
        seen.push(challenge);
        return asWriter(challenge);
      });
      const error = await failure(client.getBlob(pushed.layerDigest, 1024));
      expect(error.code).toBe('REGISTRY_HTTP');
      expect(error.status).toBe(401);
      expect(seen.map((challenge) => challenge.scheme)).toEqual(['basic']);
      const there = proxy.elsewhere.received.slice(received);
      expect(there.map((request) => request.path)).toEqual([blobPath]);
      expect(there.filter((request) => request.headers.authorization !== undefined)).toEqual([]);
      // The registry's own credential stays usable for the next request (one not redirected).
      expect((await client.getManifest('v1'))?.digest).toBe(pushed.manifestDigest);
      expect(seen).toHaveLength(1);
    } finally {
      proxy.redirectElsewhere(undefined);
      proxy.elsewhere.answerWith({ status: 200, body: 'not the blob that was asked for\n' });
    }
  });
});

describe('credentials in the registry URL', () => {
  it.each([
    ['OciClient', (url: string) => new OciClient({ url, repository: 'team/app', allowInsecureHttp: true })],
    ['ociRemote', (url: string) => ociRemote({ url, repository: 'team/app', allowInsecureHttp: true })],
  ])('%s refuses userinfo as REGISTRY_INVALID without repeating the password', (_, open) => {
    let error: unknown;
    try {
      open(`http://writer:${encodeURIComponent(WRITER_PASSWORD)}@127.0.0.1:1`);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RegistryError);
    expect((error as RegistryError).code).toBe('REGISTRY_INVALID');
    expect(leaksIn(renderings(error).join('\n'))).toEqual([]);
  });
});

describe('canary: no password in errors, events, the store or request logs', () => {
  it('leaves no rendering of any password anywhere after successful and failed operations', async () => {
    const errors: unknown[] = [];
    const events: StoreEvent[] = [];
    const roots: string[] = [];
    const remoteOf = (url: string, repository: string, auth: RegistryAuth) =>
      ociRemote({ url, repository, auth, allowInsecureHttp: true, timeoutMs: 5_000 });
    const storeWith = async (remote: ReturnType<typeof ociRemote>) => {
      const root = join(await tempDir(), 'store');
      roots.push(root);
      return provingEveryTree(await openContentStore({ root, remote, onEvent: (event) => events.push(event) }));
    };
    const files = { 'SKILL.md': '# canary\n', 'scripts/run.sh': 'echo canary\n' };
    const noFill = () => Promise.reject(new Error('the remote should have served this'));

    for (const url of [proxy.url, tokenRegistry.url]) {
      // Success: fill from the origin, pushed in the background, pulled by a second store.
      const first = await storeWith(remoteOf(url, 'canary/store', asWriter));
      await first.acquire(keyFor('canary-1'), fillWith(files));
      await first.remember('canary-fact', 'value');
      await first.remoteIdle();
      const second = await storeWith(remoteOf(url, 'canary/store', asWriter));
      expect((await second.acquire(keyFor('canary-1'), noFill)).source).toBe('remote');
      expect(await remoteOf(url, 'canary/store', asWriter).recall('canary-fact')).toBe('value');

      // Failure: the wrong password, for pull, push and facts.
      const refused = await storeWith(remoteOf(url, 'canary/store', withWrongPassword));
      await refused.acquire(keyFor('canary-2'), fillWith(files));
      await refused.remember('refused-fact', 'value');
      await refused.remoteIdle();
      expect(await refused.recall('other-fact')).toBeUndefined();

      for (const auth of [withWrongPassword, asReader, undefined]) {
        const client = clientOf(url, 'canary/client', auth);
        for (const operation of [
          () => client.getManifest('v1'),
          () => client.pushBlob(Buffer.from('x')),
          () => client.listTags(),
        ]) {
          errors.push(
            await operation().then(
              () => undefined,
              (error: unknown) => error,
            ),
          );
        }
      }
    }
    // All 18 failed but two: the reader may read the token registry's (empty) repository.
    expect(errors.filter((error) => error instanceof RegistryError && error.code === 'REGISTRY_AUTH')).toHaveLength(16);

    const types = events.map((event) => event.type);
    expect(types.filter((type) => type === 'remote-pushed')).toHaveLength(2);
    expect(types.filter((type) => type === 'remote-hit')).toHaveLength(2);
    const warnings = events.filter((event) => event.type === 'remote-warning');
    expect(warnings.map((event) => `${event.operation} ${event.code}`).sort()).toEqual(
      ['pull', 'push', 'remember']
        .flatMap((operation) => [`${operation} REGISTRY_AUTH`, `${operation} REGISTRY_AUTH`])
        .sort(),
    );

    const places: Record<string, string> = {
      errors: errors.flatMap((error) => [...renderings(error), ...causeChain(error).map(jsonOf)]).join('\n'),
      events: events.map(jsonOf).join('\n'),
      'store files': (await Promise.all(roots.map(everyFileAndLink))).join('\n'),
      'proxy request log': JSON.stringify(proxy.requests.log),
      'token request log': JSON.stringify(tokenServer.requests.log),
      'registry logs': `${tokenRegistry.log()}\n${plainRegistry.log()}`,
    };
    // The scanner finds what it looks for: a Basic header with the password is caught.
    expect(leaksIn(`Authorization: Basic ${Buffer.from(`writer:${WRITER_PASSWORD}`).toString('base64')}`)).not.toEqual(
      [],
    );
    expect(places['store files']).toContain('canary');
    for (const [place, text] of Object.entries(places))
      expect({ place, leaks: leaksIn(text) }).toEqual({ place, leaks: [] });
  });
});

/** Every form a password could leak in: raw, URL-, form- and JSON-escaped, base64 (alone and as `user:password`), hex. */
function secretForms(): string[] {
  const forms = new Set<string>();
  for (const [user, password] of [
    ['writer', WRITER_PASSWORD],
    ['reader', READER_PASSWORD],
    ['writer', WRONG_PASSWORD],
  ] as const) {
    for (const data of [password, `${user}:${password}`]) {
      forms.add(data);
      forms.add(encodeURIComponent(data));
      forms.add(new URLSearchParams({ x: data }).toString().slice(2));
      forms.add(JSON.stringify(data).slice(1, -1));
      forms.add(Buffer.from(data).toString('base64'));
      forms.add(Buffer.from(data).toString('base64url'));
      forms.add(Buffer.from(data).toString('hex'));
    }
  }
  return [...forms];
}

function leaksIn(text: string): string[] {
  return secretForms().filter((form) => text.includes(form));
}

function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (
    let current = error;
    current !== undefined && current !== null && chain.length < 20;
    current = (current as { cause?: unknown }).cause
  ) {
    chain.push(current);
  }
  return chain;
}

function jsonOf(value: unknown): string {
  try {
    const own =
      typeof value === 'object' && value !== null
        ? Object.fromEntries(
            Object.getOwnPropertyNames(value).map((name) => [name, (value as Record<string, unknown>)[name]]),
          )
        : value;
    return JSON.stringify(own) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Names and contents of everything under `root`: files read whole, links by target. */
async function everyFileAndLink(root: string): Promise<string> {
  const texts: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const name of await readdir(dir)) {
      const path = join(dir, name);
      texts.push(path);
      const info = await lstat(path);
      if (info.isDirectory()) await walk(path);
      else if (info.isSymbolicLink()) texts.push(await readlink(path));
      else if (info.isFile()) texts.push((await readFile(path)).toString('latin1'));
    }
  };
  await walk(root);
  return texts.join('\n');
}
