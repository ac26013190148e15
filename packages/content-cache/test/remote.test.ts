import { readFile, readdir, readlink, stat, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OCI_MANIFEST, OciClient, packTree } from '@agentproto/oci';
import {
  type CacheKey,
  type ContentStore,
  type Fill,
  type ObjectMarker,
  type StoreEvent,
  objectTag,
  ociRemote,
  openContentStore,
} from '@agentproto/content-cache';
import { canonicalJson, objectIdOf } from '../src/canonical-key.js';
import { OBJECT_ARTIFACT_TYPE, OBJECT_CONFIG_TYPE } from '../src/remote/oci-remote.js';
import { type OciRegistry, startOciRegistry, tarOf, type TarOfEntry } from '@agentproto/testkit';
import { storeState, visibleProblems } from './support/inspect.js';
import { tempDir } from './support/temp.js';
import { provingEveryTree } from './support/verify.js';

let registry: OciRegistry;
let repoCounter = 0;

beforeAll(async () => {
  registry = await startOciRegistry();
});

afterAll(async () => {
  await registry?.close();
});

/** A repository of its own per test, so tests never see each other's tags. */
function freshRepository(): string {
  repoCounter += 1;
  return `agentproto/cache-${process.pid}-${repoCounter}`;
}

interface Machine {
  store: ContentStore;
  events: StoreEvent[];
  fills: number;
  fill(files: Record<string, string>): Fill;
}

async function machine(
  repository: string,
  options: { url?: string; timeoutMs?: number; limits?: { maxBytes?: number; maxFiles?: number } } = {},
): Promise<Machine> {
  const events: StoreEvent[] = [];
  const store = provingEveryTree(
    await openContentStore({
      root: join(await tempDir(), 'store'),
      remote: ociRemote({
        url: options.url ?? registry.url,
        repository,
        allowInsecureHttp: true,
        timeoutMs: options.timeoutMs,
        limits: options.limits,
      }),
      onEvent: (event) => events.push(event),
    }),
  );
  const m: Machine = {
    store,
    events,
    fills: 0,
    fill(files) {
      return async (_destination, context) => {
        m.fills += 1;
        for (const [path, text] of Object.entries(files))
          await context.writeFile(path, text, { mode: path.endsWith('.sh') ? 0o755 : 0o644 });
      };
    },
  };
  return m;
}

const FILES = { 'SKILL.md': '# review\n', 'scripts/run.sh': 'echo hi\n', 'docs/guide.md': 'read me\n' };

function keyOf(contentId: string): CacheKey {
  return {
    provider: 'git',
    declaration: { source: 'https://example.test/skills.git', path: 'skills/review' },
    version: `v-${contentId}`,
    contentId,
  };
}

async function treeFiles(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    for (const entry of await readdir(join(root, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(path);
      else if (entry.isSymbolicLink()) out[path] = `-> ${await readlink(join(root, path))}`;
      else
        out[path] =
          `${((await stat(join(root, path))).mode & 0o777).toString(8)} ${await readFile(join(root, path), 'utf8')}`;
    }
  };
  await walk('');
  return out;
}

const warnings = (events: StoreEvent[]) =>
  events.filter((e): e is Extract<StoreEvent, { type: 'remote-warning' }> => e.type === 'remote-warning');

describe('remote tier: two machines', () => {
  it('machine B takes what machine A filled from the registry, without running its fill', async () => {
    const repository = freshRepository();
    const a = await machine(repository);
    const b = await machine(repository);
    const key = keyOf('tree-1');

    const first = await a.store.acquire(key, a.fill(FILES));
    expect(first.source).toBe('origin');
    await a.store.remoteIdle();
    expect(a.events.map((e) => e.type)).toEqual(['remote-miss', 'remote-pushed']);

    const second = await b.store.acquire(key, b.fill({ 'SKILL.md': 'never used' }));
    expect(b.fills).toBe(0);
    expect(second).toMatchObject({
      source: 'remote',
      fromCache: true,
      digest: first.digest,
      files: 3,
      objectId: first.objectId,
    });
    expect(await treeFiles(second.linkPath)).toEqual(await treeFiles(first.linkPath));
    expect(b.events).toEqual([
      {
        type: 'remote-hit',
        objectId: first.objectId,
        remote: `${registry.url}/${repository}`,
        files: 3,
        bytes: first.bytes,
      },
    ]);
    // What came from the registry is an ordinary object: verify re-hashes it from disk.
    expect((await b.store.verify()).corrupt).toEqual([]);
    expect(visibleProblems(b.store.root)).toEqual([]);

    // A third acquisition on B is a local hit: no registry involved.
    const third = await b.store.acquire(key, b.fill({}));
    expect(third.source).toBe('store');
    expect(b.events).toHaveLength(1);
  });

  it('keeps links and execute bits through the registry', async () => {
    const repository = freshRepository();
    const a = await machine(repository);
    const b = await machine(repository);
    const key = keyOf('with-link');
    const { symlink, mkdir } = await import('node:fs/promises');
    await a.store.acquire(key, async (destination, context) => {
      await context.writeFile('SKILL.md', '# linked\n');
      await context.writeFile('bin/tool', '#!/bin/sh\n', { mode: 0o755 });
      await mkdir(join(destination, 'docs'), { recursive: true });
      await symlink('../SKILL.md', join(destination, 'docs/readme.md'));
    });
    await a.store.remoteIdle();
    const pulled = await b.store.acquire(key, b.fill({}));
    expect(pulled.source).toBe('remote');
    expect(await treeFiles(pulled.path)).toEqual({
      'SKILL.md': '644 # linked\n',
      'bin/tool': '755 #!/bin/sh\n',
      'docs/readme.md': '-> ../SKILL.md',
    });
  });

  it('shares facts with the registry but believes only its own: B does not recall what A remembered', async () => {
    const repository = freshRepository();
    const a = await machine(repository);
    const b = await machine(repository);
    const name = 'git-tree\0https://example.test/x.git\0abc\0skills/x';
    await a.store.remember(name, 'tree-id-1');
    await a.store.remoteIdle();
    expect(a.events).toEqual([]);
    expect(await ociRemote({ url: registry.url, repository, allowInsecureHttp: true }).recall(name)).toBe('tree-id-1');
    expect(await b.store.recall(name)).toBeUndefined();
    expect(b.events).toEqual([]);
    // A's own fact is kept locally: found again with the registry gone.
    const offline = await openContentStore({ root: a.store.root });
    expect(await offline.recall(name)).toBe('tree-id-1');
    // B learns the same value itself: the registry already holds it, nothing is pushed.
    await b.store.remember(name, 'tree-id-1');
    await b.store.remoteIdle();
    expect(warnings(a.events).concat(warnings(b.events))).toEqual([]);
  });

  it('lists the keys the registry holds, and pushes a stored key on demand', async () => {
    const repository = freshRepository();
    const local = await openContentStore({ root: join(await tempDir(), 'store') });
    const key = keyOf('pushed-later');
    await local.acquire(key, async (_d, context) => context.writeFile('SKILL.md', '# later\n'));
    const remote = ociRemote({ url: registry.url, repository, allowInsecureHttp: true });
    const withRemote = await openContentStore({ root: local.root, remote });
    expect(await remote.listKeys()).toEqual([]);
    expect(await withRemote.push(key)).toBe(true);
    expect(await withRemote.push(keyOf('not-stored'))).toBe(false);
    const listed = await remote.listKeys();
    expect(listed).toHaveLength(1);
    expect(canonicalJson(listed[0]!.key as never)).toBe(canonicalJson(key as never));
    expect(listed[0]!.marker.objectId).toBe(objectIdOf(key));
  });

  it('gives the same layer bytes for the same tree', async () => {
    const a = await machine(freshRepository());
    const tree = await a.store.acquire(keyOf('same-bytes'), a.fill(FILES));
    expect((await packTree(tree.path)).equals(await packTree(tree.path))).toBe(true);
  });
});

describe('remote tier: concurrent pushes', () => {
  it('four machines filling and pushing one object at once leave one good artifact', async () => {
    const repository = freshRepository();
    const machines = await Promise.all([0, 1, 2, 3].map(() => machine(repository)));
    const key = keyOf('raced');
    const trees = await Promise.all(machines.map((m) => m.store.acquire(key, m.fill(FILES))));
    await Promise.all(machines.map((m) => m.store.remoteIdle()));
    expect(new Set(trees.map((t) => t.digest)).size).toBe(1);
    expect(machines.flatMap((m) => warnings(m.events))).toEqual([]);
    expect(machines.flatMap((m) => m.events).filter((e) => e.type === 'remote-pushed')).toHaveLength(
      machines.filter((m) => m.fills > 0).length,
    );

    const late = await machine(repository);
    const pulled = await late.store.acquire(key, late.fill({}));
    expect(pulled).toMatchObject({ source: 'remote', digest: trees[0]!.digest });
    expect(late.fills).toBe(0);
  });

  it('eight concurrent pushes of one object through one client all succeed', async () => {
    const repository = freshRepository();
    const a = await machine(repository);
    const key = keyOf('pushed-8');
    const tree = await a.store.acquire(key, a.fill(FILES));
    await a.store.remoteIdle();
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => a.store.push(key)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill('fulfilled'));
    const b = await machine(repository);
    expect(await b.store.acquire(key, b.fill({}))).toMatchObject({ source: 'remote', digest: tree.digest });
  });
});

describe('remote tier: a registry that cannot be trusted or reached', () => {
  it('a tampered blob in the registry is detected, reported, and the origin used', async () => {
    const repository = freshRepository();
    const a = await machine(repository);
    const key = keyOf('tampered');
    await a.store.acquire(key, a.fill(FILES));
    await a.store.remoteIdle();
    const client = new OciClient({ url: registry.url, repository, allowInsecureHttp: true });
    const layer = (await client.getManifest(objectTag(objectIdOf(key))))!.manifest.layers[0]!;
    const onDisk = await readFile(registry.blobPath(layer.digest));
    const flipped = Buffer.from(onDisk);
    flipped[flipped.length - 12] = flipped[flipped.length - 12]! ^ 0xff; // same length, other bytes
    await writeFile(registry.blobPath(layer.digest), flipped);

    const b = await machine(repository);
    const tree = await b.store.acquire(key, b.fill(FILES));
    expect(tree.source).toBe('origin');
    expect(b.fills).toBe(1);
    expect(warnings(b.events).map((w) => [w.operation, w.code])).toEqual([['pull', 'REGISTRY_DIGEST_MISMATCH']]);
    expect(await treeFiles(tree.path)).toEqual(await treeFiles((await a.store.lookup(key))!.path));
    expect(storeState(b.store.root).staging).toEqual([]);
  });

  it('an artifact whose blobs are intact but whose tree is not what its marker says is refused', async () => {
    const repository = freshRepository();
    const key = keyOf('lying-marker');
    const real = await machine(freshRepository());
    const honest = await real.store.acquire(key, real.fill(FILES));
    const marker = JSON.parse(await readFile(join(honest.path, '..', 'COMPLETE.json'), 'utf8')) as ObjectMarker;
    // Same marker, other content: every digest the registry checks is right.
    const other = await machine(freshRepository());
    const forged = await other.store.acquire(keyOf('forged-content'), other.fill({ ...FILES, 'SKILL.md': '# evil\n' }));
    await putObject(repository, marker, await packTree(forged.path));

    const b = await machine(repository);
    const tree = await b.store.acquire(key, b.fill(FILES));
    expect(tree).toMatchObject({ source: 'origin', digest: honest.digest });
    expect(warnings(b.events).map((w) => w.code)).toEqual(['CACHE_REMOTE_MISMATCH']);
    expect(await readFile(join(tree.path, 'SKILL.md'), 'utf8')).toBe('# review\n');
  });

  it('a registry that is down is reported once, then skipped; the origin serves', async () => {
    const repository = freshRepository();
    const server = createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve())); // nothing listens there now
    const b = await machine(repository, { url: `http://127.0.0.1:${port}` });
    const started = Date.now();
    const first = await b.store.acquire(keyOf('down-1'), b.fill(FILES));
    const second = await b.store.acquire(keyOf('down-2'), b.fill(FILES));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect([first.source, second.source]).toEqual(['origin', 'origin']);
    const codes = warnings(b.events).map((w) => [w.operation, w.code, w.message.includes('skipped')]);
    // The first pull finds it down; everything after is skipped without a connection.
    expect(codes[0]).toEqual(['pull', 'REGISTRY_UNREACHABLE', false]);
    expect(codes.slice(1).every(([, code, skipped]) => code === 'REGISTRY_UNREACHABLE' && skipped)).toBe(true);
    await b.store.remoteIdle();
  });

  it('a registry that never answers costs one timeout, then the origin serves', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent: Server = createServer(() => undefined); // accepts, never answers
    silent.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const b = await machine(freshRepository(), {
        url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        timeoutMs: 300,
      });
      const started = Date.now();
      const tree = await b.store.acquire(keyOf('slow'), b.fill(FILES));
      expect(tree.source).toBe('origin');
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(warnings(b.events)[0]).toMatchObject({ operation: 'pull', code: 'REGISTRY_UNREACHABLE' });
      expect(warnings(b.events)[0]!.message).toContain('no answer within 300 ms');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('the registry stopping in the middle of a layer publishes nothing; the origin serves', async () => {
    const repository = freshRepository();
    const a = await machine(repository);
    const key = keyOf('cut-short');
    const big = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`data/${i}.txt`, `${i}`.repeat(20_000 + i)]));
    await a.store.acquire(key, a.fill({ 'SKILL.md': '# big\n', ...big }));
    await a.store.remoteIdle();
    // A proxy in front of the registry that hangs up halfway through every blob body.
    const proxy = await cuttingProxy(registry.url);
    try {
      const b = await machine(repository, { url: proxy.url });
      const tree = await b.store.acquire(key, b.fill({ 'SKILL.md': '# big\n', ...big }));
      expect(tree.source).toBe('origin');
      expect(proxy.cut()).toBeGreaterThan(0);
      // The pull broke; the push that follows the origin fill is then skipped, not tried.
      expect(warnings(b.events)[0]).toMatchObject({ operation: 'pull', code: 'REGISTRY_UNREACHABLE' });
      expect(warnings(b.events).every((w) => w.code === 'REGISTRY_UNREACHABLE')).toBe(true);
      expect(storeState(b.store.root).staging).toEqual([]);
      expect((await b.store.verify()).corrupt).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('a registry stopped mid-run: pushes fail as warnings, the caller never fails, and it is used again once back', async () => {
    const repository = freshRepository();
    let now = 0;
    const events: StoreEvent[] = [];
    const store = provingEveryTree(
      await openContentStore({
        root: join(await tempDir(), 'store'),
        remote: ociRemote({
          url: registry.url,
          repository,
          allowInsecureHttp: true,
          timeoutMs: 2_000,
          retryAfterMs: 1_000,
          clock: () => now,
        }),
        onEvent: (event) => events.push(event),
      }),
    );
    const fill =
      (text: string): Fill =>
      async (_d, context) =>
        context.writeFile('SKILL.md', text);
    await store.acquire(keyOf('before-stop'), fill('# 1\n'));
    await store.remoteIdle();
    await registry.stop();
    try {
      const during = await store.acquire(keyOf('during-stop'), fill('# 2\n'));
      await store.remoteIdle();
      expect(during.source).toBe('origin');
      expect(warnings(events).length).toBeGreaterThan(0);
      expect(warnings(events).every((w) => w.code === 'REGISTRY_UNREACHABLE')).toBe(true);
    } finally {
      await registry.restart();
    }
    now += 1_001; // past retryAfterMs: the registry is tried again
    const after = await store.acquire(keyOf('after-restart'), fill('# 3\n'));
    await store.remoteIdle();
    expect(after.source).toBe('origin');
    expect(events.at(-1)).toMatchObject({ type: 'remote-pushed', objectId: after.objectId });
  });
});

describe('remote tier: malicious artifacts', () => {
  const cases: {
    name: string;
    entries: TarOfEntry[];
    code: string;
    limits?: { maxBytes?: number };
    claimBytes?: number;
  }[] = [
    {
      name: 'a "../" entry',
      entries: [file('SKILL.md', '# x\n'), file('../escape.txt', 'out')],
      code: 'UNSAFE_ARCHIVE',
    },
    {
      name: 'an absolute entry',
      entries: [file('SKILL.md', '# x\n'), file('/etc/evil', 'out')],
      code: 'UNSAFE_ARCHIVE',
    },
    {
      name: 'a link to an absolute path',
      entries: [file('SKILL.md', '# x\n'), link('passwd', '/etc/passwd')],
      code: 'UNSAFE_ARCHIVE',
    },
    {
      name: 'a link climbing out',
      entries: [file('SKILL.md', '# x\n'), link('docs/up', '../../outside')],
      code: 'UNSAFE_ARCHIVE',
    },
    {
      name: 'a hard link',
      entries: [file('SKILL.md', '# x\n'), { name: 'hard', type: 'link', linkname: 'SKILL.md' }],
      code: 'UNSAFE_ARCHIVE',
    },
    { name: 'a FIFO', entries: [file('SKILL.md', '# x\n'), { name: 'pipe', type: 'fifo' }], code: 'UNSAFE_ARCHIVE' },
    {
      name: 'links that escape only when followed',
      entries: [file('SKILL.md', '# x\n'), link('here', '.'), link('away', 'here/..')],
      code: 'CACHE_UNSAFE_TREE',
    },
    {
      name: 'a file far larger than the marker says',
      entries: [file('SKILL.md', 'x'.repeat(4 * 1024 * 1024))],
      code: 'UNSAFE_ARCHIVE',
    },
    {
      name: 'a size bomb over the limit',
      entries: [
        file('SKILL.md', '# x\n'),
        ...Array.from({ length: 8 }, (_, i) => file(`zeros/${i}`, '\0'.repeat(1024 * 1024))),
      ],
      code: 'UNSAFE_ARCHIVE',
      limits: { maxBytes: 2 * 1024 * 1024 },
      claimBytes: 1024 * 1024,
    },
  ];

  for (const { name, entries, code, limits, claimBytes } of cases) {
    it(`refuses ${name}, publishes nothing of it, and fills from the origin`, async () => {
      const repository = freshRepository();
      const key = keyOf(`malicious-${name}`);
      const honestFiles = { 'SKILL.md': '# honest\n' };
      const layer = gzipSync(await tarOf(entries));
      // The marker claims the honest tree, sized so only the content can give it away.
      const marker: ObjectMarker = {
        format: 1,
        objectId: objectIdOf(key),
        provider: key.provider,
        contentId: key.contentId,
        digest: `sha256:${'0'.repeat(64)}`,
        files: 1,
        bytes: claimBytes ?? 9,
      };
      await putObject(repository, marker, layer);

      const b = await machine(repository, { limits });
      const tree = await b.store.acquire(key, b.fill(honestFiles));
      expect(tree.source).toBe('origin');
      expect(warnings(b.events).map((w) => w.code)).toEqual([code]);
      expect(await treeFiles(tree.path)).toEqual({ 'SKILL.md': '644 # honest\n' });
      expect(storeState(b.store.root).staging).toEqual([]);
      expect(visibleProblems(b.store.root)).toEqual([]);
    });
  }

  it('refuses an artifact of another type, and a marker for another object', async () => {
    const key = keyOf('wrong-type');
    const a = await machine(freshRepository());
    const tree = await a.store.acquire(key, a.fill(FILES));
    const marker = JSON.parse(await readFile(join(tree.path, '..', 'COMPLETE.json'), 'utf8')) as ObjectMarker;

    const wrongType = freshRepository();
    await putObject(wrongType, marker, await packTree(tree.path), { artifactType: 'application/vnd.example.other' });
    const b = await machine(wrongType);
    expect((await b.store.acquire(key, b.fill(FILES))).source).toBe('origin');
    expect(warnings(b.events).map((w) => w.code)).toEqual(['REGISTRY_BAD_ARTIFACT']);

    const otherObject = freshRepository();
    await putObject(otherObject, { ...marker, contentId: 'something-else' }, await packTree(tree.path), {
      tagFor: marker.objectId,
    });
    const c = await machine(otherObject);
    expect((await c.store.acquire(key, c.fill(FILES))).source).toBe('origin');
    expect(warnings(c.events).map((w) => w.code)).toEqual(['REGISTRY_BAD_ARTIFACT']);
  });

  it('refuses a tree the caller check rejects, and fills from the origin', async () => {
    const repository = freshRepository();
    const a = await machine(repository);
    const key = keyOf('no-skill-file');
    await a.store.acquire(key, a.fill({ 'README.md': 'no skill here\n' }));
    await a.store.remoteIdle();
    const b = await machine(repository);
    const check = async (destination: string) => {
      await stat(join(destination, 'SKILL.md'));
    };
    const tree = await b.store.acquire(key, b.fill(FILES), { check });
    expect(tree.source).toBe('origin');
    // The warning carries the check's own error code.
    expect(warnings(b.events).map((w) => [w.operation, w.code])).toEqual([['pull', 'ENOENT']]);
    expect(Object.keys(await treeFiles(tree.path)).sort()).toEqual(Object.keys(FILES).sort());
  });
});

function file(name: string, data: string): TarOfEntry {
  return { name, type: 'file', data };
}

function link(name: string, linkname: string): TarOfEntry {
  return { name, type: 'symlink', linkname };
}

/** Puts an object artifact straight into the registry, as someone with push rights could. */
async function putObject(
  repository: string,
  marker: ObjectMarker,
  layer: Buffer,
  options: { artifactType?: string; tagFor?: string } = {},
): Promise<void> {
  const client = new OciClient({ url: registry.url, repository, allowInsecureHttp: true });
  const layerBlob = await client.pushBlob(layer);
  const config = await client.pushBlob(Buffer.from(canonicalJson({ format: 1, marker } as never)));
  await client.putManifest(objectTag(options.tagFor ?? marker.objectId), {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    artifactType: options.artifactType ?? OBJECT_ARTIFACT_TYPE,
    config: { mediaType: OBJECT_CONFIG_TYPE, digest: config.digest, size: config.size },
    layers: [
      { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: layerBlob.digest, size: layerBlob.size },
    ],
  });
}

/** An HTTP proxy to the registry that sends half of each blob body, then drops the connection. */
async function cuttingProxy(target: string): Promise<{ url: string; cut(): number; close(): Promise<void> }> {
  let cuts = 0;
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      `${target}${req.url}`,
      { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
      (answer) => {
        const isBlob = req.method === 'GET' && /\/blobs\/sha256:/.test(req.url ?? '');
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (!isBlob) {
          answer.pipe(res);
          return;
        }
        const length = Number(answer.headers['content-length'] ?? 0);
        let sent = 0;
        answer.on('data', (chunk) => {
          if (length < 1024) {
            res.write(chunk);
            return;
          }
          const room = Math.floor(length / 2) - sent;
          if (room > 0) res.write(chunk.subarray(0, room));
          sent += chunk.length;
          if (sent >= length / 2 && !res.destroyed) {
            cuts += 1;
            res.socket?.destroy();
            answer.destroy();
          }
        });
        answer.on('end', () => res.end());
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut: () => cuts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
