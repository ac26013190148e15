import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isDotGit } from '@agentproto/archive';
import { RegistryError, packTree } from '@agentproto/oci';
import { SIDECAR } from '../bundle/include.js';
import { type Finding, sortFindings } from '../findings.js';
import { importPlugin } from '../import/index.js';
import type { SpecVersion } from '../schemas.js';
import { byteOrder } from '../text.js';
import { validatePlugin } from '../validate/index.js';
import { PluginRejectedError, emitPlugin } from '../write/emit.js';
import { writePlugin } from '../write/write.js';
import { type PluginArtifactConfig, pluginManifest, renderArtifactConfig } from './artifact.js';
import { PluginEntryUnsupportedError, PluginPackageInvalidError } from './errors.js';
import { type PluginRegistryOptions, openRepository } from './repository.js';

/** How pushPlugin reaches the registry: `auth`, `allowInsecureHttp`, `fetch`, `timeoutMs`, `signal` (PluginRegistryOptions). */
export type PushPluginOptions = PluginRegistryOptions;

/** What pushPlugin uploaded: the references to pull it by, and what checking the package reported. */
export interface PushedPlugin {
  /** `host[:port]/repository:tag`, as pushed. */
  ref: string;
  /** `host[:port]/repository@sha256:…`: the same artifact, pinned to its manifest. */
  pinned: string;
  /** The manifest's digest: the same package pushed again gives the same digest. */
  digest: string;
  /** The manifest's size in bytes (with `digest`, its OCI descriptor). */
  size: number;
  /** The one layer (the package as a deterministic tar.gz): its digest and size in bytes. */
  layer: { digest: string; size: number };
  /** The Agent Plugins version of the package's plugin.json. */
  spec: SpecVersion;
  /** The package paths in the artifact, in byte order. */
  files: string[];
  /** What validation and the clean emit reported (warnings, info; never an error), sorted. */
  findings: Finding[];
}

/** pushPlugin's work (see ./index.ts), loaded with the registry client and the packing code on the first push. */
export async function pushArtifact(
  dir: string,
  reference: string,
  options: PushPluginOptions = {},
): Promise<PushedPlugin> {
  const { client, parsed, label } = openRepository(reference, options);
  const tag = parsed.tag;
  if (tag === undefined || parsed.digest !== undefined) {
    // A manifest's digest is known only once it is built: there is nothing to put "@sha256:…" under.
    throw new RegistryError('REGISTRY_INVALID', `artifact reference ${label}: push needs a tag and no digest`);
  }
  const root = resolve(dir);
  const scratch = await mkdtemp(join(tmpdir(), 'agent-plugins-push-'));
  try {
    const clean = await emitCleanPackage(root, label, scratch);
    const config: PluginArtifactConfig = {
      format: 1,
      name: clean.name,
      ...(clean.version === undefined ? {} : { version: clean.version }),
      spec: clean.spec,
      files: clean.files.length,
    };
    const layerBytes = await packTree(clean.dir);
    const layer = await client.pushBlob(layerBytes, options.signal);
    const configBlob = await client.pushBlob(renderArtifactConfig(config), options.signal);
    const manifest = pluginManifest(config, configBlob, layer);
    const digest = await client.putManifest(tag, manifest, options.signal);
    return {
      ref: label,
      pinned: `${parsed.registry}/${parsed.repository}@${digest}`,
      digest,
      // The bytes putManifest sent: it serializes the manifest the same way.
      size: Buffer.byteLength(JSON.stringify(manifest)),
      layer: { digest: layer.digest, size: layer.size },
      spec: clean.spec,
      files: clean.files,
      findings: clean.findings,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

interface CleanPackage {
  dir: string;
  name: string;
  version: string | undefined;
  spec: SpecVersion;
  files: string[];
  findings: Finding[];
}

/** Validates `root`, refuses links, and emits its clean package to `scratch/package`. */
async function emitCleanPackage(root: string, label: string, scratch: string): Promise<CleanPackage> {
  const validation = await validatePlugin(root);
  if (hasError(validation.findings)) throw new PluginPackageInvalidError(label, root, validation.findings);
  await refuseLinks(root, label);
  const imported = await importPlugin(root);
  if (imported.rejected || imported.config === undefined)
    throw new PluginPackageInvalidError(label, root, imported.findings);
  const content = join(scratch, 'content');
  const out = join(scratch, 'package');
  await writePlugin(imported.content, content);
  let emitted;
  try {
    // The imported configuration carries the package's spec, so the emit keeps its version.
    emitted = await emitPlugin(imported.config, out, { contentRoot: content });
  } catch (error) {
    if (error instanceof PluginRejectedError) throw new PluginPackageInvalidError(label, root, error.findings);
    throw error;
  }
  if (hasError(emitted.validation.findings))
    throw new PluginPackageInvalidError(label, root, emitted.validation.findings);
  await rm(join(out, SIDECAR), { force: true });
  return {
    dir: out,
    name: imported.config.name,
    version: imported.config.version,
    spec: emitted.spec,
    files: emitted.files.filter((path) => path !== SIDECAR),
    findings: uniqueFindings([...validation.findings, ...emitted.findings]),
  };
}

/** Every entry below `root` must be a regular file or a folder; the first other one (in byte order) refuses the package. */
async function refuseLinks(root: string, label: string): Promise<void> {
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(rel === '' ? root : join(root, ...rel.split('/')), { withFileTypes: true });
    entries.sort((a, b) => byteOrder(a.name, b.name));
    for (const entry of entries) {
      // Never shipped (the reader denies it), so nothing in it can change what is pushed.
      if (isDotGit(entry.name)) continue;
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isSymbolicLink()) throw new PluginEntryUnsupportedError(label, root, path, 'symbolic link');
      if (entry.isDirectory()) await walk(path);
      else if (!entry.isFile()) throw new PluginEntryUnsupportedError(label, root, path, 'special file');
    }
  };
  await walk('');
}

function hasError(findings: readonly Finding[]): boolean {
  return findings.some((finding) => finding.severity === 'error');
}

function uniqueFindings(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return sortFindings(
    findings.filter((finding) => {
      const key = `${finding.code}\0${finding.path}\0${finding.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    }),
  );
}
