import { parseUntrustedJson } from '@agentproto/documents';
import { type Descriptor, type ImageManifest, LAYER_TAR_GZIP, OCI_MANIFEST } from '@agentproto/oci';
import type { SpecVersion } from '../schemas.js';
import { PluginArtifactError, PluginTooLargeError } from './errors.js';

/** The OCI artifact type of an Agent Plugins package. */
export const PLUGIN_ARTIFACT_TYPE = 'application/vnd.agentproto.plugin.v1';
/** The media type of its config blob (PluginArtifactConfig as JSON). */
export const PLUGIN_CONFIG_TYPE = 'application/vnd.agentproto.plugin.config.v1+json';
/** Its one layer: the package as a deterministic tar.gz. */
const PLUGIN_LAYER_TYPE = LAYER_TAR_GZIP;

/** A config is a handful of fields; anything larger is not one push wrote. */
const MAX_CONFIG_BYTES = 64 * 1024;

/** The config blob: what a registry UI or `oras manifest fetch-config` shows without the layer. */
export interface PluginArtifactConfig {
  format: 1;
  /** plugin.json `name`. */
  name: string;
  /** plugin.json `version`, when it has one. */
  version?: string;
  /** The Agent Plugins version plugin.json targets. */
  spec: SpecVersion;
  /** Regular files in the layer. */
  files: number;
}

/**
 * The config's bytes: keys in a fixed order, no whitespace, so the same package gives the
 * same config blob and therefore the same manifest digest.
 */
export function renderArtifactConfig(config: PluginArtifactConfig): Buffer {
  const ordered = {
    format: config.format,
    name: config.name,
    ...(config.version === undefined ? {} : { version: config.version }),
    spec: config.spec,
    files: config.files,
  };
  return Buffer.from(JSON.stringify(ordered));
}

/**
 * The manifest push writes. No `created` annotation or any other clock: a second push of the
 * same package must give the same digest.
 */
export function pluginManifest(
  config: PluginArtifactConfig,
  configBlob: Pick<Descriptor, 'digest' | 'size'>,
  layer: Pick<Descriptor, 'digest' | 'size'>,
): ImageManifest {
  return {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    artifactType: PLUGIN_ARTIFACT_TYPE,
    config: { mediaType: PLUGIN_CONFIG_TYPE, digest: configBlob.digest, size: configBlob.size },
    layers: [{ mediaType: PLUGIN_LAYER_TYPE, digest: layer.digest, size: layer.size }],
    annotations: {
      'org.opencontainers.image.title': config.name,
      ...(config.version === undefined ? {} : { 'org.opencontainers.image.version': config.version }),
    },
  };
}

/**
 * Checks a fetched manifest is a plugin artifact as push writes it, before any blob is read:
 * the artifact type, the config's media type and size, exactly one tar.gz layer within
 * `maxLayerBytes`. Returns the config and layer descriptors.
 */
export function checkArtifactManifest(
  reference: string,
  manifest: ImageManifest,
  maxLayerBytes: number,
): { config: Descriptor; layer: Descriptor } {
  const refuse = (problem: string) => new PluginArtifactError(reference, problem);
  if (manifest.artifactType !== PLUGIN_ARTIFACT_TYPE) {
    throw refuse(`artifact type ${JSON.stringify(manifest.artifactType ?? null)} is not ${PLUGIN_ARTIFACT_TYPE}`);
  }
  if (manifest.config.mediaType !== PLUGIN_CONFIG_TYPE)
    throw refuse(`config media type ${JSON.stringify(manifest.config.mediaType)} is not ${PLUGIN_CONFIG_TYPE}`);
  if (manifest.config.size > MAX_CONFIG_BYTES) {
    throw new PluginTooLargeError(
      reference,
      'config',
      MAX_CONFIG_BYTES,
      `the config declares ${manifest.config.size} bytes`,
      manifest.config.size,
    );
  }
  if (manifest.layers.length !== 1) throw refuse(`${manifest.layers.length} layers, not 1`);
  const layer = manifest.layers[0]!;
  if (layer.mediaType !== PLUGIN_LAYER_TYPE)
    throw refuse(`layer media type ${JSON.stringify(layer.mediaType)} is not ${PLUGIN_LAYER_TYPE}`);
  if (layer.size > maxLayerBytes)
    throw new PluginTooLargeError(
      reference,
      'layer',
      maxLayerBytes,
      `the layer declares ${layer.size} bytes`,
      layer.size,
    );
  return { config: manifest.config, layer };
}

/** Parses the config blob (already size-checked and digest-checked) and checks its shape. */
export function parseArtifactConfig(reference: string, bytes: Uint8Array): PluginArtifactConfig {
  const refuse = (problem: string, cause?: unknown) =>
    new PluginArtifactError(reference, problem, cause === undefined ? undefined : { cause });
  let value: unknown;
  try {
    value = parseUntrustedJson(bytes, { source: 'the config' });
  } catch (error) {
    throw refuse('the config is not UTF-8 JSON', error);
  }
  const config = value as Partial<PluginArtifactConfig> | null;
  if (typeof config !== 'object' || config === null || Array.isArray(config) || config.format !== 1)
    throw refuse('the config is not a format-1 object');
  if (typeof config.name !== 'string' || config.name === '') throw refuse('the config names no plugin');
  if (config.version !== undefined && typeof config.version !== 'string')
    throw refuse('the config version is not a string');
  if (typeof config.spec !== 'string') throw refuse('the config names no spec version');
  if (typeof config.files !== 'number' || !Number.isSafeInteger(config.files) || config.files < 0)
    throw refuse('the config file count is not a count');
  return {
    format: 1,
    name: config.name,
    ...(config.version === undefined ? {} : { version: config.version }),
    spec: config.spec,
    files: config.files,
  };
}
