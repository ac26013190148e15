import { randomBytes } from 'node:crypto';
import { cp, lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import {
  EMPTY_JSON,
  EMPTY_JSON_MEDIA_TYPE,
  type ImageManifest,
  LAYER_TAR,
  LAYER_TAR_GZIP,
  OCI_MANIFEST,
  OciClient,
  RegistryError,
} from '@agentproto/oci';
import { type OciRegistry, startOciRegistry, tarOf, type TarOfEntry } from '@agentproto/testkit';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PluginOciError, type PullLimits, SIDECAR, pullPlugin, pushPlugin } from '../src/index.js';
import {
  PLUGIN_ARTIFACT_TYPE,
  PLUGIN_CONFIG_TYPE,
  parseArtifactConfig,
  renderArtifactConfig,
} from '../src/oci/artifact.js';
import { PLUGIN_100, json, skillMd } from './support/validate-packages.js';

const golden = fileURLToPath(new URL('./golden/', import.meta.url));

let registry: OciRegistry;
beforeAll(async () => {
  registry = await startOciRegistry();
});
afterAll(async () => {
  await registry?.close();
});

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-plugins-oci-test-'));
  made.push(dir);
  return dir;
}

/** A repository name no other test uses, so tags and blobs never meet across tests. */
let repositories = 0;
const repository = () => `plugins/t${++repositories}`;
const http = { allowInsecureHttp: true } as const;

interface TreeFile {
  bytes: Buffer;
  mode: number;
}

/** Every regular file below `dir` with its bytes and permission bits; anything else fails the test. */
async function tree(dir: string): Promise<Map<string, TreeFile>> {
  const files = new Map<string, TreeFile>();
  const walk = async (rel: string): Promise<void> => {
    for (const name of (await readdir(join(dir, rel))).sort()) {
      const path = rel === '' ? name : `${rel}/${name}`;
      const info = await lstat(join(dir, path));
      if (info.isDirectory()) await walk(path);
      else if (info.isFile()) files.set(path, { bytes: await readFile(join(dir, path)), mode: info.mode & 0o777 });
      else throw new Error(`${path} is neither a file nor a folder`);
    }
  };
  await walk('');
  return files;
}

/** The golden package as a pull must give it back: every file but the sidecar, which push leaves out. */
async function goldenWithoutSidecar(spec: string): Promise<Map<string, TreeFile>> {
  const files = await tree(join(golden, spec));
  expect(files.has(SIDECAR)).toBe(true);
  files.delete(SIDECAR);
  return files;
}

/** The real fetch, with every request it makes written down (method and path). */
function countingFetch(): { fetch: typeof globalThis.fetch; requests: string[] } {
  const requests: string[] = [];
  return {
    requests,
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      requests.push(`${init?.method ?? 'GET'} ${url.pathname}`);
      return globalThis.fetch(input, init);
    },
  };
}

/** What the rejected promise threw; fails the test when it resolved. */
async function failure(promise: Promise<unknown>): Promise<Error & { code?: string; [key: string]: unknown }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string; [key: string]: unknown };
  }
  throw new Error('expected a failure, and it succeeded');
}

/** `dir` does not exist and its parent holds nothing else: no staging folder was left behind either. */
async function expectNothingAt(dir: string): Promise<void> {
  await expect(lstat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  expect(await readdir(dirname(dir))).toEqual([]);
}

const PLUGIN_JSON = json({
  $schema: PLUGIN_100,
  name: 'acme.tools',
  version: '1.2.0',
  description: 'Acme review tooling.',
});
/** A valid package: plugin.json and one skill. */
const VALID: readonly TarOfEntry[] = [
  { name: 'plugin.json', data: PLUGIN_JSON },
  { name: 'skills/review/SKILL.md', data: skillMd('review') },
];

interface RawArtifact {
  /** The layer's entries, gzipped; VALID by default. */
  entries?: readonly TarOfEntry[];
  /** Or the layer's bytes exactly. */
  layer?: Buffer | (() => Promise<Buffer>);
  layerMediaType?: string;
  /** A second layer (the OCI empty blob). */
  extraLayer?: boolean;
  /** `null` leaves the field out. */
  artifactType?: string | null;
  config?: Buffer | Record<string, unknown>;
  configMediaType?: string;
}

/** Pushes an artifact by hand with the OCI client, as a hostile or buggy publisher could. Returns its manifest digest. */
async function pushRaw(repo: string, tag: string, artifact: RawArtifact): Promise<string> {
  const client = new OciClient({ url: registry.url, repository: repo, ...http });
  const entries = artifact.entries ?? VALID;
  const given = typeof artifact.layer === 'function' ? await artifact.layer() : artifact.layer;
  const layer = await client.pushBlob(given ?? gzipSync(await tarOf(entries)));
  const files = entries.filter((entry) => (entry.type ?? 'file') === 'file').length;
  const configBytes = Buffer.isBuffer(artifact.config)
    ? artifact.config
    : Buffer.from(
        JSON.stringify(artifact.config ?? { format: 1, name: 'acme.tools', version: '1.2.0', spec: '1.0.0', files }),
      );
  const config = await client.pushBlob(configBytes);
  const layers = [{ mediaType: artifact.layerMediaType ?? LAYER_TAR_GZIP, digest: layer.digest, size: layer.size }];
  if (artifact.extraLayer) {
    const empty = await client.pushBlob(EMPTY_JSON);
    layers.push({ mediaType: EMPTY_JSON_MEDIA_TYPE, digest: empty.digest, size: empty.size });
  }
  const artifactType = artifact.artifactType === undefined ? PLUGIN_ARTIFACT_TYPE : artifact.artifactType;
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    ...(artifactType === null ? {} : { artifactType }),
    config: { mediaType: artifact.configMediaType ?? PLUGIN_CONFIG_TYPE, digest: config.digest, size: config.size },
    layers,
  };
  return client.putManifest(tag, manifest);
}

describe('pushPlugin and pullPlugin', () => {
  it.each(['1.0.0', '1.1.0'])('a %s package comes back byte for byte, modes included, and validates', async (spec) => {
    const repo = repository();
    const ref = `${registry.host}/${repo}:v1`;
    const pushed = await pushPlugin(join(golden, spec), ref, http);
    expect(pushed).toMatchObject({ ref, pinned: `${registry.host}/${repo}@${pushed.digest}`, spec });
    expect(pushed.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(pushed.findings).toEqual([]);

    const dir = join(await scratch(), 'acme.tools');
    const pulled = await pullPlugin(ref, dir, http);
    const expected = await goldenWithoutSidecar(spec);
    const actual = await tree(dir);
    expect([...actual.keys()]).toEqual([...expected.keys()]);
    expect(actual).toEqual(expected);
    expect(actual.get('bin/acme-index')?.mode).toBe(0o755);
    expect(pushed.files).toEqual([...expected.keys()].sort());
    expect(pulled).toMatchObject({
      ref,
      dir,
      digest: pushed.digest,
      config: { format: 1, name: 'acme.tools', spec, files: expected.size },
    });
    expect(pulled.validation).toMatchObject({ spec, rejected: false, findings: [], skills: ['release', 'review'] });
  });

  it('the artifact is what the issue names: artifact type, config, one tar.gz layer, title and version annotations', async () => {
    const repo = repository();
    const pushed = await pushPlugin(join(golden, '1.0.0'), `${registry.host}/${repo}:v1`, http);
    const client = new OciClient({ url: registry.url, repository: repo, ...http });
    const found = await client.getManifest('v1');
    expect(found?.digest).toBe(pushed.digest);
    expect(found?.bytes.length).toBe(pushed.size);
    expect(found?.manifest).toMatchObject({
      artifactType: PLUGIN_ARTIFACT_TYPE,
      config: { mediaType: PLUGIN_CONFIG_TYPE },
      layers: [{ mediaType: LAYER_TAR_GZIP, digest: pushed.layer.digest, size: pushed.layer.size }],
      annotations: { 'org.opencontainers.image.title': 'acme.tools', 'org.opencontainers.image.version': '1.2.0' },
    });
    const config = JSON.parse((await client.getBlob(found!.manifest.config.digest, 65_536)).toString('utf8'));
    expect(config).toEqual({
      format: 1,
      name: 'acme.tools',
      version: '1.2.0',
      spec: '1.0.0',
      files: pushed.files.length,
    });
  });

  it('the same package pushed twice, from two copies, gives the same manifest digest', async () => {
    const repo = repository();
    const copy = join(await scratch(), 'copy');
    // A fresh copy: other mtimes and inode order, the same files and modes.
    await cp(join(golden, '1.1.0'), copy, { recursive: true });
    const first = await pushPlugin(join(golden, '1.1.0'), `${registry.host}/${repo}:a`, http);
    const again = await pushPlugin(join(golden, '1.1.0'), `${registry.host}/${repo}:a`, http);
    const fromCopy = await pushPlugin(copy, `${registry.host}/${repo}:b`, http);
    expect(again.digest).toBe(first.digest);
    expect(fromCopy.digest).toBe(first.digest);
    expect(fromCopy.layer).toEqual(first.layer);
    const tags = await new OciClient({ url: registry.url, repository: repo, ...http }).listTags();
    expect(tags.sort()).toEqual(['a', 'b']);
  });

  it('pulls by digest, and by tag and digest (the digest wins)', async () => {
    const repo = repository();
    const pushed = await pushPlugin(join(golden, '1.0.0'), `${registry.host}/${repo}:v1`, http);
    const other = await pushPlugin(join(golden, '1.1.0'), `${registry.host}/${repo}:v2`, http);
    expect(other.digest).not.toBe(pushed.digest);

    const byDigest = join(await scratch(), 'by-digest');
    const pulled = await pullPlugin(pushed.pinned, byDigest, http);
    expect(pulled).toMatchObject({ digest: pushed.digest, config: { spec: '1.0.0' } });
    expect(await tree(byDigest)).toEqual(await goldenWithoutSidecar('1.0.0'));

    // The tag names the 1.1.0 package, the digest the 1.0.0 one.
    const both = join(await scratch(), 'both');
    const pinned = await pullPlugin(`${registry.host}/${repo}:v2@${pushed.digest}`, both, http);
    expect(pinned).toMatchObject({ digest: pushed.digest, config: { spec: '1.0.0' } });
  });

  it('an unknown tag or digest is PLUGIN_OCI_NOT_FOUND, naming the reference', async () => {
    const repo = repository();
    await pushPlugin(join(golden, '1.0.0'), `${registry.host}/${repo}:v1`, http);
    for (const ref of [`${registry.host}/${repo}:nope`, `${registry.host}/${repo}@sha256:${'0'.repeat(64)}`]) {
      const dir = join(await scratch(), 'out');
      const error = await failure(pullPlugin(ref, dir, http));
      expect(error).toBeInstanceOf(PluginOciError);
      expect(error).toMatchObject({ code: 'PLUGIN_OCI_NOT_FOUND', reference: ref });
      expect(error.message).toContain(ref);
      await expectNothingAt(dir);
    }
  });

  it('push leaves out the sidecar and what a client would skip, and reports it', async () => {
    const source = join(await scratch(), 'source');
    await cp(join(golden, '1.0.0'), source, { recursive: true });
    const manifest = JSON.parse(await readFile(join(source, 'plugin.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(source, 'plugin.json'), json({ ...manifest, colour: 'blue' }));
    const ref = `${registry.host}/${repository()}:v1`;
    const pushed = await pushPlugin(source, ref, http);
    expect(pushed.findings.map((f) => f.code)).toContain('plugin.unknown-field');
    expect(pushed.files).not.toContain(SIDECAR);

    const dir = join(await scratch(), 'pulled');
    await pullPlugin(ref, dir, http);
    // The field a client ignores is dropped: plugin.json is the golden one again.
    expect(await tree(dir)).toEqual(await goldenWithoutSidecar('1.0.0'));
  });

  it('pull takes an empty folder as the destination, and refuses a non-empty one or a file before fetching anything', async () => {
    const ref = `${registry.host}/${repository()}:v1`;
    await pushPlugin(join(golden, '1.0.0'), ref, http);
    const base = await scratch();

    const empty = join(base, 'empty');
    await mkdir(empty);
    await pullPlugin(ref, empty, http);
    expect((await tree(empty)).size).toBe((await goldenWithoutSidecar('1.0.0')).size);

    const full = join(base, 'full');
    await mkdir(full);
    await writeFile(join(full, 'mine.txt'), 'keep me');
    const file = join(base, 'file');
    await writeFile(file, 'keep me too');
    for (const dir of [full, file]) {
      const counted = countingFetch();
      const error = await failure(pullPlugin(ref, dir, { ...http, fetch: counted.fetch }));
      expect(error).toMatchObject({ code: 'PLUGIN_OCI_DESTINATION_EXISTS', dir });
      expect(counted.requests).toEqual([]);
    }
    expect(await readFile(join(full, 'mine.txt'), 'utf8')).toBe('keep me');
    expect(await readFile(file, 'utf8')).toBe('keep me too');
    expect((await readdir(base)).sort()).toEqual(['empty', 'file', 'full']);
  });

  it('push needs a tag, without a digest, and never a scheme or credentials in the reference', async () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    for (const ref of [
      `${registry.host}/plugins/x@${digest}`,
      `${registry.host}/plugins/x:v1@${digest}`,
      `${registry.host}/plugins/x`,
      `http://${registry.host}/plugins/x:v1`,
      `user:secret@${registry.host}/plugins/x:v1`,
    ]) {
      const error = await failure(pushPlugin(join(golden, '1.0.0'), ref, http));
      expect(error).toBeInstanceOf(RegistryError);
      expect(error.code).toBe('REGISTRY_INVALID');
    }
  });
});

describe('a tampered registry', () => {
  // Its own registry: the golden layer is shared by every repository of a registry, and this
  // test damages it on disk.
  let own: OciRegistry;
  beforeAll(async () => {
    own = await startOciRegistry();
  });
  afterAll(async () => {
    await own?.close();
  });

  it.each([
    ['other bytes of the same length', (bytes: Buffer) => randomBytes(bytes.length)],
    [
      'one byte flipped in the middle',
      (bytes: Buffer) => Buffer.from(bytes.map((b, i) => (i === bytes.length >> 1 ? b ^ 0xff : b))),
    ],
    [
      'one byte flipped in the gzip trailer',
      (bytes: Buffer) => Buffer.from(bytes.map((b, i) => (i === bytes.length - 1 ? b ^ 0x01 : b))),
    ],
  ])('a layer blob with %s fails with REGISTRY_DIGEST_MISMATCH and leaves nothing at dir', async (_name, tamper) => {
    const repo = `plugins/tampered-${randomBytes(4).toString('hex')}`;
    const source = join(await scratch(), 'source');
    // A package of its own, so each row damages its own layer.
    await cp(join(golden, '1.0.0'), source, { recursive: true });
    await writeFile(join(source, 'notes.md'), `${repo}\n`);
    // Incompressible, so the layer arrives in many chunks and the archive reader meets the
    // damage long before the download ends and its digest is checked.
    await writeFile(join(source, 'assets/noise.bin'), randomBytes(2 * 1024 * 1024));
    const ref = `${own.host}/${repo}:v1`;
    const pushed = await pushPlugin(source, ref, http);
    const path = own.blobPath(pushed.layer.digest);
    const original = await readFile(path);
    expect(original.length).toBe(pushed.layer.size);
    await writeFile(path, tamper(original));

    const dir = join(await scratch(), 'pulled');
    const error = await failure(pullPlugin(ref, dir, http));
    expect(error).toBeInstanceOf(RegistryError);
    expect(error.code).toBe('REGISTRY_DIGEST_MISMATCH');
    await expectNothingAt(dir);

    // Put back, the same blob pulls: the failure was the tampering and nothing else.
    await writeFile(path, original);
    await pullPlugin(ref, dir, http);
    expect((await tree(dir)).get('notes.md')?.bytes.toString('utf8')).toBe(`${repo}\n`);
  });
});

describe('pullPlugin refuses a hostile or foreign artifact, leaving nothing at dir', () => {
  const valid = [...VALID];
  const cases: {
    name: string;
    artifact: RawArtifact;
    limits?: PullLimits;
    code: string;
    facts?: Record<string, unknown>;
  }[] = [
    {
      name: 'a layer entry climbing out with ../',
      artifact: { entries: [...valid, { name: '../escape.txt', data: 'x' }] },
      code: 'PLUGIN_OCI_UNSAFE_LAYER',
      facts: { reason: 'dot-dot', entry: '../escape.txt' },
    },
    {
      name: 'a layer entry with ../ in the middle',
      artifact: { entries: [...valid, { name: 'skills/../../escape.txt', data: 'x' }] },
      code: 'PLUGIN_OCI_UNSAFE_LAYER',
      facts: { reason: 'dot-dot' },
    },
    {
      name: 'an absolute entry name',
      artifact: { entries: [...valid, { name: '/tmp/escape.txt', data: 'x' }] },
      code: 'PLUGIN_OCI_UNSAFE_LAYER',
      facts: { reason: 'absolute-name' },
    },
    {
      name: 'a symbolic link, even one inside',
      artifact: { entries: [...valid, { name: 'skills/review/LINK.md', type: 'symlink', linkname: 'SKILL.md' }] },
      code: 'PLUGIN_OCI_UNSAFE_LAYER',
      facts: { reason: 'link', entry: 'skills/review/LINK.md' },
    },
    {
      name: 'a symbolic link out of the package',
      artifact: { entries: [...valid, { name: 'passwd', type: 'symlink', linkname: '/etc/passwd' }] },
      code: 'PLUGIN_OCI_UNSAFE_LAYER',
      facts: { reason: 'link' },
    },
    {
      name: 'a hard link',
      artifact: { entries: [...valid, { name: 'copy.md', type: 'link', linkname: 'plugin.json' }] },
      code: 'PLUGIN_OCI_UNSAFE_LAYER',
      facts: { reason: 'link', entry: 'copy.md' },
    },
    {
      name: 'two entries for one path',
      artifact: { entries: [...valid, { name: 'plugin.json', data: '{}' }] },
      code: 'PLUGIN_OCI_UNSAFE_LAYER',
      facts: { reason: 'duplicate' },
    },
    {
      name: 'a layer that is not gzip',
      artifact: {
        layer: Buffer.from('not a gzip stream at all'),
        config: { format: 1, name: 'acme.tools', spec: '1.0.0', files: 0 },
      },
      code: 'PLUGIN_OCI_UNSAFE_LAYER',
      facts: { reason: 'malformed' },
    },
    {
      name: 'a file over the unpacked limit (refused at its header)',
      artifact: { entries: [...valid, { name: 'big.bin', data: Buffer.alloc(2 * 1024 * 1024) }] },
      limits: { maxUnpackedBytes: 1024 * 1024 },
      code: 'PLUGIN_OCI_TOO_LARGE',
      facts: { part: 'unpacked', limit: 1024 * 1024 },
    },
    {
      name: 'a gzip bomb: 8 MiB of zeros after the tar, inflating past the limit',
      // A valid package, then zeros the tar parser never asks for but zlib inflates all the same.
      artifact: {
        layer: async () => gzipSync(Buffer.concat([await tarOf(VALID), Buffer.alloc(8 * 1024 * 1024)]), { level: 9 }),
        config: { format: 1, name: 'acme.tools', spec: '1.0.0', files: 2 },
      },
      limits: { maxUnpackedBytes: 1024 * 1024 },
      code: 'PLUGIN_OCI_TOO_LARGE',
      facts: { part: 'unpacked' },
    },
    {
      name: 'more files than maxFiles',
      artifact: {},
      limits: { maxFiles: 1 },
      code: 'PLUGIN_OCI_TOO_LARGE',
      facts: { part: 'files', limit: 1 },
    },
    {
      name: 'a layer over maxLayerBytes',
      artifact: {},
      limits: { maxLayerBytes: 64 },
      code: 'PLUGIN_OCI_TOO_LARGE',
      facts: { part: 'layer', limit: 64 },
    },
    {
      name: 'another artifact type',
      artifact: { artifactType: 'application/vnd.example.other' },
      code: 'PLUGIN_OCI_NOT_A_PLUGIN',
    },
    { name: 'no artifact type', artifact: { artifactType: null }, code: 'PLUGIN_OCI_NOT_A_PLUGIN' },
    {
      name: 'another config media type',
      artifact: { configMediaType: 'application/vnd.oci.image.config.v1+json' },
      code: 'PLUGIN_OCI_NOT_A_PLUGIN',
    },
    { name: 'an uncompressed tar layer', artifact: { layerMediaType: LAYER_TAR }, code: 'PLUGIN_OCI_NOT_A_PLUGIN' },
    { name: 'two layers', artifact: { extraLayer: true }, code: 'PLUGIN_OCI_NOT_A_PLUGIN' },
    {
      name: 'a config that is not JSON',
      artifact: { config: Buffer.from('name=acme') },
      code: 'PLUGIN_OCI_NOT_A_PLUGIN',
    },
    {
      name: 'a config counting other files than the layer holds',
      artifact: { config: { format: 1, name: 'acme.tools', spec: '1.0.0', files: 3 } },
      code: 'PLUGIN_OCI_NOT_A_PLUGIN',
    },
    {
      name: 'a config over 64 KiB',
      artifact: {
        config: Buffer.from(
          JSON.stringify({ format: 1, name: 'acme.tools', spec: '1.0.0', files: 2, pad: 'x'.repeat(70_000) }),
        ),
      },
      code: 'PLUGIN_OCI_TOO_LARGE',
      facts: { part: 'config' },
    },
    {
      name: 'a package without plugin.json',
      artifact: { entries: [{ name: 'skills/review/SKILL.md', data: skillMd('review') }] },
      code: 'PLUGIN_OCI_INVALID_PACKAGE',
      facts: {
        findings: expect.arrayContaining([expect.objectContaining({ code: 'plugin.missing', severity: 'error' })]),
      },
    },
    {
      name: 'a package whose skill breaks the rules (not rejected, still an error)',
      artifact: { entries: [...valid, { name: 'skills/Bad_Name/SKILL.md', data: skillMd('Bad_Name') }] },
      code: 'PLUGIN_OCI_INVALID_PACKAGE',
      facts: { findings: expect.arrayContaining([expect.objectContaining({ severity: 'error', rule: 'AR9O1' })]) },
    },
  ];

  it.each(cases)('$name: $code', async ({ artifact, limits, code, facts }) => {
    const repo = repository();
    const ref = `${registry.host}/${repo}:bad`;
    await pushRaw(repo, 'bad', artifact);
    const dir = join(await scratch(), 'pulled');
    const error = await failure(pullPlugin(ref, dir, { ...http, ...(limits ? { limits } : {}) }));
    expect(error).toBeInstanceOf(PluginOciError);
    expect(error).toMatchObject({ code, reference: ref, ...facts });
    expect(error.message.startsWith(`${ref}: `)).toBe(true);
    await expectNothingAt(dir);
    // Nothing escaped beside the destination either.
    await expect(lstat(join(dirname(dir), '..', 'escape.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a manifest refused on its face costs no blob download', async () => {
    const repo = repository();
    await pushRaw(repo, 'other', { artifactType: 'application/vnd.example.other' });
    await pushRaw(repo, 'big', {});
    for (const [tag, limits] of [
      ['other', undefined],
      ['big', { maxLayerBytes: 64 }],
    ] as const) {
      const counted = countingFetch();
      await failure(
        pullPlugin(`${registry.host}/${repo}:${tag}`, join(await scratch(), 'x'), {
          ...http,
          fetch: counted.fetch,
          ...(limits ? { limits } : {}),
        }),
      );
      expect(counted.requests).toEqual([`GET /v2/${repo}/manifests/${tag}`]);
    }
  });

  it('the valid raw artifact, pushed the same way, is accepted: the refusals above are the rows, not the helper', async () => {
    const repo = repository();
    await pushRaw(repo, 'good', {});
    const dir = join(await scratch(), 'pulled');
    const pulled = await pullPlugin(`${registry.host}/${repo}:good`, dir, http);
    expect(pulled.validation).toMatchObject({ rejected: false, findings: [], skills: ['review'] });
    expect((await tree(dir)).get('plugin.json')?.bytes.toString('utf8')).toBe(PLUGIN_JSON);
  });
});

describe('pushPlugin refuses a package before anything is uploaded', () => {
  async function packageWith(files: Record<string, string>): Promise<string> {
    const root = join(await scratch(), 'package');
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    return root;
  }

  it.each<{ name: string; files: Record<string, string>; finding: string }>([
    {
      name: 'a plugin.json a client rejects (bad name)',
      files: { 'plugin.json': json({ $schema: PLUGIN_100, name: 'Acme Tools' }) },
      finding: 'plugin.name-invalid',
    },
    {
      name: 'no plugin.json at all',
      files: { 'skills/review/SKILL.md': skillMd('review') },
      finding: 'plugin.missing',
    },
    {
      name: 'a skill a client skips (an error, though the plugin loads)',
      files: { 'plugin.json': PLUGIN_JSON, 'skills/review/SKILL.md': skillMd('other-name') },
      finding: 'skill.name-mismatch',
    },
  ])('$name: PLUGIN_OCI_INVALID_PACKAGE with the findings, no request made', async ({ files, finding }) => {
    const repo = repository();
    const root = await packageWith(files);
    const counted = countingFetch();
    const error = await failure(pushPlugin(root, `${registry.host}/${repo}:v1`, { ...http, fetch: counted.fetch }));
    expect(error).toMatchObject({ code: 'PLUGIN_OCI_INVALID_PACKAGE', source: root });
    expect((error.findings as { code: string }[]).map((f) => f.code)).toContain(finding);
    expect(counted.requests).toEqual([]);
    expect(await new OciClient({ url: registry.url, repository: repo, ...http }).listTags()).toEqual([]);
  });

  it('a package holding a symbolic link: PLUGIN_OCI_UNSUPPORTED_ENTRY naming it, no request made', async () => {
    const repo = repository();
    const root = join(await scratch(), 'package');
    await cp(join(golden, '1.0.0'), root, { recursive: true });
    await symlink('SKILL.md', join(root, 'skills/review/ALIAS.md'));
    const counted = countingFetch();
    const error = await failure(pushPlugin(root, `${registry.host}/${repo}:v1`, { ...http, fetch: counted.fetch }));
    expect(error).toMatchObject({
      code: 'PLUGIN_OCI_UNSUPPORTED_ENTRY',
      path: 'skills/review/ALIAS.md',
      kind: 'symbolic link',
      dir: root,
    });
    expect(counted.requests).toEqual([]);
  });
});

describe('registry credentials', () => {
  // distribution's "silly" access controller: any Authorization header passes, none gets a
  // bearer challenge. Enough to show the token goes where it must and nowhere else.
  let guarded: OciRegistry;
  beforeAll(async () => {
    guarded = await startOciRegistry({
      extraConfig: 'auth:\n  silly:\n    realm: http://127.0.0.1:1/token\n    service: testkit\n',
    });
  });
  afterAll(async () => {
    await guarded?.close();
  });

  it('come only from the auth callback, and never appear in an error', async () => {
    const ref = `${guarded.host}/plugins/private:v1`;
    const anonymous = await failure(pushPlugin(join(golden, '1.0.0'), ref, http));
    expect(anonymous).toMatchObject({ code: 'REGISTRY_AUTH' });

    const token = `tok-${randomBytes(8).toString('hex')}`;
    const asked: string[] = [];
    const auth = (challenge: { scheme: string }) => {
      asked.push(challenge.scheme);
      return { token };
    };
    const pushed = await pushPlugin(join(golden, '1.0.0'), ref, { ...http, auth });
    expect(asked).toContain('bearer');
    const dir = join(await scratch(), 'pulled');
    await pullPlugin(ref, dir, { ...http, auth });
    expect((await pullPlugin(pushed.pinned, join(await scratch(), 'again'), { ...http, auth })).digest).toBe(
      pushed.digest,
    );

    const missing = await failure(
      pullPlugin(`${guarded.host}/plugins/private:missing`, join(await scratch(), 'x'), { ...http, auth }),
    );
    expect(missing.code).toBe('PLUGIN_OCI_NOT_FOUND');
    for (const error of [anonymous, missing]) expect(`${error.message} ${String(error.stack)}`).not.toContain(token);
  });
});

describe('the artifact config', () => {
  it('renders and parses back to the same value, and renders the same bytes every time', () => {
    const config = fc.record(
      {
        format: fc.constant(1 as const),
        name: fc.string({ minLength: 1 }),
        version: fc.string(),
        spec: fc.constantFrom('1.0.0' as const, '1.1.0' as const),
        files: fc.nat(),
      },
      { requiredKeys: ['format', 'name', 'spec', 'files'] },
    );
    fc.assert(
      fc.property(config, (value) => {
        const bytes = renderArtifactConfig(value);
        expect(parseArtifactConfig('r', bytes)).toEqual(value);
        expect(renderArtifactConfig({ ...parseArtifactConfig('r', bytes) })).toEqual(bytes);
      }),
    );
  });
});
