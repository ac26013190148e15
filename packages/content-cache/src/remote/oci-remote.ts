import { type CacheKey, canonicalJson, canonicalKey, objectIdOf, sha256Hex } from '../canonical-key.js';
import type { ObjectMarker } from '../store.js';
import {
  EMPTY_JSON,
  EMPTY_JSON_MEDIA_TYPE,
  type ImageManifest,
  LAYER_TAR,
  LAYER_TAR_GZIP,
  type LayerOptions,
  OCI_MANIFEST,
  OciClient,
  type OciClientOptions,
  RegistryError,
  packTree,
  unpackLayer,
} from '@agentproto/oci';
import type { RemoteFillContext, RemoteObject, StoreRemote } from './store-remote.js';

export const OBJECT_ARTIFACT_TYPE = 'application/vnd.agentproto.cache.object.v1';
export const OBJECT_CONFIG_TYPE = 'application/vnd.agentproto.cache.object.config.v1+json';
const FACT_ARTIFACT_TYPE = 'application/vnd.agentproto.cache.fact.v1';
const FACT_CONFIG_TYPE = 'application/vnd.agentproto.cache.fact.config.v1+json';

/** Tag of an object: a digest of its content identity (provider, content id). */
export const objectTag = (objectId: string) => `object-${objectId}`;
/** Tag of a key: a digest of the canonical key. Its manifest shares the object's layer. */
const keyTag = (key: CacheKey) => `key-${sha256Hex(canonicalKey(key))}`;
/** Tag of a fact: a digest of its name. */
const factTag = (name: string) => `fact-${sha256Hex(name)}`;

export interface OciRemoteOptions extends OciClientOptions, LayerOptions {
  /** Limits on what is pulled. A config or layer over them is refused before it is read. */
  limits?: { maxBytes?: number; maxFiles?: number };
  /** After the registry is found unreachable, skip it for this long (ms). Default 30 000. */
  retryAfterMs?: number;
  /** Milliseconds since the epoch, for retryAfterMs. Default Date.now. */
  clock?: () => number;
}

const MAX_CONFIG_BYTES = 64 * 1024;

/**
 * A store's remote tier on an OCI registry (CNCF distribution, Harbor, GHCR, ECR, Artifact
 * Registry, Zot). Each published object is an artifact: one deterministic tar.gz layer of
 * its tree, a config holding its completion marker, a manifest with the artifact type
 * `application/vnd.agentproto.cache.object.v1`, tagged `object-<objectId>`. Each key gets
 * its own small manifest over the same layer (its config adds the key), tagged
 * `key-<sha256(canonical key)>`, so a machine can list the keys a registry holds. Facts
 * are artifacts tagged `fact-<sha256(name)>`.
 *
 * The registry is an optimisation and trusted for nothing: every blob and manifest is
 * checked against its SHA-256 and the store recomputes the tree's digest after extraction
 * (that catches damage), but a writer with push rights can make all of those agree on
 * content of its own. So the store publishes a pulled tree only once the acquisition's
 * `verify` proved it to be the content the origin names, and the facts kept here are
 * written for other tools, never believed by a store (see ContentStore.recall).
 */
export function ociRemote(options: OciRemoteOptions): OciRemote {
  return new OciRemote(options);
}

export class OciRemote implements StoreRemote {
  readonly client: OciClient;
  private readonly maxBytes: number;
  private readonly maxFiles: number;
  private readonly retryAfterMs: number;
  private readonly clock: () => number;
  private readonly gzipLevel: number | undefined;
  private downUntil = 0;

  constructor(options: OciRemoteOptions) {
    this.client = new OciClient(options);
    this.maxBytes = options.limits?.maxBytes ?? 1024 * 1024 * 1024;
    this.maxFiles = options.limits?.maxFiles ?? 200_000;
    this.retryAfterMs = options.retryAfterMs ?? 30_000;
    this.clock = options.clock ?? Date.now;
    this.gzipLevel = options.gzipLevel;
  }

  get label(): string {
    return this.client.label;
  }

  async pull(objectId: string, destination: string, context: RemoteFillContext): Promise<RemoteObject | undefined> {
    return this.guard(async () => {
      const found = await this.client.getManifest(objectTag(objectId), context.signal);
      if (!found) return undefined;
      const { manifest } = found;
      const layer = this.checkObjectManifest(manifest, objectId);
      const config = await this.readConfig(manifest, OBJECT_CONFIG_TYPE, context.signal);
      const marker = checkMarker(config.marker, objectId, this.maxBytes, this.maxFiles, this.label);
      await unpackLayer(
        this.client,
        layer,
        destination,
        context,
        { maxBytes: this.maxBytes, maxFiles: this.maxFiles, maxEntryBytes: marker.bytes },
        context.signal,
      );
      return { marker };
    });
  }

  async push(object: { key: CacheKey; marker: ObjectMarker; path: string }, signal?: AbortSignal): Promise<void> {
    await this.guard(() => retryRaces(() => this.pushOnce(object, signal)));
  }

  /** The layer and both manifests; blobs the registry has already are not uploaded again. */
  private async pushOnce(
    object: { key: CacheKey; marker: ObjectMarker; path: string },
    signal?: AbortSignal,
  ): Promise<void> {
    const layer = await this.client.pushBlob(await packTree(object.path, { gzipLevel: this.gzipLevel }), signal);
    const layerDescriptor = { mediaType: LAYER_TAR_GZIP, digest: layer.digest, size: layer.size };
    const objectConfig = await this.client.pushBlob(
      Buffer.from(canonicalJson({ format: 1, marker: object.marker })),
      signal,
    );
    await this.client.putManifest(
      objectTag(object.marker.objectId),
      objectManifest(objectConfig, layerDescriptor),
      signal,
    );
    const keyConfig = await this.client.pushBlob(
      Buffer.from(canonicalJson({ format: 1, marker: object.marker, key: object.key })),
      signal,
    );
    await this.client.putManifest(keyTag(object.key), objectManifest(keyConfig, layerDescriptor), signal);
  }

  async recall(name: string, signal?: AbortSignal): Promise<string | undefined> {
    return this.guard(async () => {
      const found = await this.client.getManifest(factTag(name), signal);
      if (!found) return undefined;
      if (found.manifest.artifactType !== FACT_ARTIFACT_TYPE)
        throw this.bad(`${factTag(name)} is not a fact (artifact type ${JSON.stringify(found.manifest.artifactType)})`);
      const config = await this.readConfig(found.manifest, FACT_CONFIG_TYPE, signal);
      if (config.name !== name || typeof config.value !== 'string')
        throw this.bad(`${factTag(name)} holds another fact`);
      return config.value;
    });
  }

  async remember(name: string, value: string, signal?: AbortSignal): Promise<void> {
    await this.guard(async () => {
      // Plain JSON in a fixed field order: fact names may hold NUL, which canonical keys refuse.
      const config = await this.client.pushBlob(Buffer.from(JSON.stringify({ format: 1, name, value })), signal);
      const empty = await this.client.pushBlob(EMPTY_JSON, signal);
      await this.client.putManifest(
        factTag(name),
        {
          schemaVersion: 2,
          mediaType: OCI_MANIFEST,
          artifactType: FACT_ARTIFACT_TYPE,
          config: { mediaType: FACT_CONFIG_TYPE, digest: config.digest, size: config.size },
          layers: [{ mediaType: EMPTY_JSON_MEDIA_TYPE, digest: empty.digest, size: empty.size }],
        },
        signal,
      );
    });
  }

  /** Every key the registry holds, with the marker of its object (`cache pull`). */
  async listKeys(signal?: AbortSignal): Promise<{ key: CacheKey; marker: ObjectMarker }[]> {
    return this.guard(async () => {
      const keys: { key: CacheKey; marker: ObjectMarker }[] = [];
      for (const tag of await this.client.listTags(signal)) {
        if (!/^key-[0-9a-f]{64}$/.test(tag)) continue;
        const found = await this.client.getManifest(tag, signal);
        if (!found) continue;
        const config = await this.readConfig(found.manifest, OBJECT_CONFIG_TYPE, signal);
        const key = config.key as CacheKey;
        if (typeof key !== 'object' || key === null || keyTag(key) !== tag) throw this.bad(`${tag} holds another key`);
        keys.push({
          key,
          marker: checkMarker(
            config.marker,
            (config.marker as ObjectMarker | undefined)?.objectId ?? '',
            this.maxBytes,
            this.maxFiles,
            this.label,
          ),
        });
      }
      return keys;
    });
  }

  /** Whether the remote is being skipped after it was found unreachable. */
  get bypassed(): boolean {
    return this.clock() < this.downUntil;
  }

  /**
   * Runs one operation unless the registry was found unreachable less than retryAfterMs
   * ago; an unreachable registry starts that pause, so a registry that is down costs one
   * timeout, not one per acquisition.
   */
  private async guard<T>(operation: () => Promise<T>): Promise<T> {
    if (this.bypassed)
      throw new RegistryError(
        'REGISTRY_UNREACHABLE',
        `${this.label}: skipped, it was unreachable less than ${this.retryAfterMs} ms ago`,
      );
    try {
      return await operation();
    } catch (error) {
      if (error instanceof RegistryError && error.code === 'REGISTRY_UNREACHABLE')
        this.downUntil = this.clock() + this.retryAfterMs;
      throw error;
    }
  }

  private checkObjectManifest(manifest: ImageManifest, objectId: string) {
    if (manifest.artifactType !== OBJECT_ARTIFACT_TYPE) {
      throw this.bad(
        `${objectTag(objectId)} is not a store object (artifact type ${JSON.stringify(manifest.artifactType)})`,
      );
    }
    if (manifest.layers.length !== 1)
      throw this.bad(`${objectTag(objectId)} has ${manifest.layers.length} layers, not 1`);
    const layer = manifest.layers[0]!;
    if (layer.mediaType !== LAYER_TAR_GZIP && layer.mediaType !== LAYER_TAR)
      throw this.bad(`${objectTag(objectId)}: layer media type ${JSON.stringify(layer.mediaType)}`);
    if (layer.size > this.maxBytes)
      throw new RegistryError(
        'REGISTRY_TOO_LARGE',
        `${this.label}: ${objectTag(objectId)}: a ${layer.size}-byte layer is over the limit of ${this.maxBytes}`,
      );
    return layer;
  }

  private async readConfig(
    manifest: ImageManifest,
    mediaType: string,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    if (manifest.config.mediaType !== mediaType)
      throw this.bad(`config media type ${JSON.stringify(manifest.config.mediaType)} is not ${mediaType}`);
    if (manifest.config.size > MAX_CONFIG_BYTES)
      throw new RegistryError('REGISTRY_TOO_LARGE', `${this.label}: a ${manifest.config.size}-byte config`);
    const bytes = await this.client.getBlob(manifest.config.digest, MAX_CONFIG_BYTES, signal);
    try {
      const value = JSON.parse(bytes.toString('utf8')) as unknown;
      if (typeof value !== 'object' || value === null || (value as { format?: unknown }).format !== 1)
        throw new Error('format');
      return value as Record<string, unknown>;
    } catch (error) {
      throw this.bad('the config is not a format-1 JSON object', error);
    }
  }

  private bad(why: string, cause?: unknown): RegistryError {
    return new RegistryError('REGISTRY_BAD_ARTIFACT', `${this.label}: ${why}`, { cause });
  }
}

/**
 * The registry's answers when another writer is uploading the same blob at this moment:
 * distribution refuses a manifest whose blob is still being committed (DIGEST_INVALID,
 * BLOB_UNKNOWN) and an upload that lost the race to commit. Measured with four machines
 * pushing one object at once: 2 pushes in 100 failed so. Trying again a little later
 * finds the blob committed (the HEAD check then skips the upload).
 */
const RACE_CODES = new Set([
  'DIGEST_INVALID',
  'BLOB_UNKNOWN',
  'MANIFEST_BLOB_UNKNOWN',
  'BLOB_UPLOAD_UNKNOWN',
  'BLOB_UPLOAD_INVALID',
]);

async function retryRaces(push: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await push();
    } catch (error) {
      const raced =
        error instanceof RegistryError && error.code === 'REGISTRY_HTTP' && RACE_CODES.has(error.registryCode ?? '');
      if (!raced || attempt >= 4) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt * attempt));
    }
  }
}

function objectManifest(
  config: { digest: string; size: number },
  layer: { mediaType: string; digest: string; size: number },
): ImageManifest {
  return {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    artifactType: OBJECT_ARTIFACT_TYPE,
    config: { mediaType: OBJECT_CONFIG_TYPE, digest: config.digest, size: config.size },
    layers: [layer],
  };
}

function checkMarker(
  value: unknown,
  objectId: string,
  maxBytes: number,
  maxFiles: number,
  label: string,
): ObjectMarker {
  const marker = value as Partial<ObjectMarker> | undefined;
  const bad = (why: string) => new RegistryError('REGISTRY_BAD_ARTIFACT', `${label}: object ${objectId}: ${why}`);
  if (typeof marker !== 'object' || marker === null || marker.format !== 1)
    throw bad('the config holds no format-1 marker');
  if (marker.objectId !== objectId || !/^[0-9a-f]{64}$/.test(objectId)) throw bad('the marker names another object');
  if (typeof marker.provider !== 'string' || typeof marker.contentId !== 'string')
    throw bad('the marker has no content identity');
  if (marker.scope !== undefined && typeof marker.scope !== 'string') throw bad("the marker's scope is not a string");
  const identity = {
    provider: marker.provider,
    contentId: marker.contentId,
    ...(marker.scope === undefined ? {} : { scope: marker.scope }),
  };
  if (objectIdOf(identity) !== objectId) throw bad("the marker's content identity is not this object's");
  if (typeof marker.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(marker.digest))
    throw bad('the marker has no tree digest');
  for (const field of ['files', 'bytes'] as const) {
    const n = marker[field];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw bad(`the marker's ${field} is not a count`);
  }
  if (marker.bytes! > maxBytes)
    throw new RegistryError(
      'REGISTRY_TOO_LARGE',
      `${label}: object ${objectId} holds ${marker.bytes} bytes, over the limit of ${maxBytes}`,
    );
  if (marker.files! > maxFiles)
    throw new RegistryError(
      'REGISTRY_TOO_LARGE',
      `${label}: object ${objectId} holds ${marker.files} files, over the limit of ${maxFiles}`,
    );
  return { format: 1, objectId, ...identity, digest: marker.digest!, files: marker.files!, bytes: marker.bytes! };
}
