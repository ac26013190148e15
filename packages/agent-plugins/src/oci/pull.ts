import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ArchiveError } from '@agentproto/archive';
import { type Descriptor, type OciClient, readLayerBlob } from '@agentproto/oci';
import { type PluginValidation, validatePlugin } from '../validate/index.js';
import { type PluginArtifactConfig, checkArtifactManifest, parseArtifactConfig } from './artifact.js';
import {
  PluginArtifactError,
  PluginDestinationError,
  PluginLayerUnsafeError,
  PluginNotFoundError,
  PluginPackageInvalidError,
  PluginTooLargeError,
} from './errors.js';
import { DEFAULT_PULL_LIMITS, type PullLimits } from './limits.js';
import { type PluginRegistryOptions, openRepository } from './repository.js';

/** How pullPlugin reaches the registry (PluginRegistryOptions) and how much it accepts. */
export interface PullPluginOptions extends PluginRegistryOptions {
  /** Caps on the layer, its inflated size and its file count. Default: DEFAULT_PULL_LIMITS. */
  limits?: PullLimits;
}

/** What pullPlugin wrote: where, which artifact exactly, and the package's validation. */
export interface PulledPlugin {
  /** The reference pulled, rebuilt from its parts. */
  ref: string;
  /** The absolute destination, now holding the package. */
  dir: string;
  /** The manifest's digest: pull `host/repository@<digest>` to get exactly this again. */
  digest: string;
  /** The artifact's config: the plugin's name, version, spec and file count as pushed. */
  config: PluginArtifactConfig;
  /** validatePlugin of the package in place: no error finding, by construction. */
  validation: PluginValidation;
}

/** pullPlugin's work (see ./index.ts), loaded with the registry client on the first pull. */
export async function pullArtifact(
  reference: string,
  dir: string,
  options: PullPluginOptions = {},
): Promise<PulledPlugin> {
  const { client, parsed, label } = openRepository(reference, options);
  const limits = { ...DEFAULT_PULL_LIMITS, ...definedOnly(options.limits) };
  const target = resolve(dir);
  // Checked before anything is fetched, and again by the rename at the end.
  await checkDestination(label, target);

  const found = await client.getManifest(parsed.digest ?? parsed.tag!, options.signal);
  if (found === undefined) throw new PluginNotFoundError(label);
  const { config: configDescriptor, layer } = checkArtifactManifest(label, found.manifest, limits.maxLayerBytes);
  // No more than the descriptor's size is read, and the bytes must hash to its digest.
  const config = parseArtifactConfig(
    label,
    await client.getBlob(configDescriptor.digest, configDescriptor.size, options.signal),
  );

  await mkdir(dirname(target), { recursive: true });
  const staging = join(dirname(target), `.${basename(target)}.pull-${randomBytes(6).toString('hex')}`);
  // 0700 until it is complete: no one else can write into (or swap folders of) the package
  // while it is extracted and validated; it opens to 0755 just before the rename.
  await mkdir(staging, { mode: 0o700 });
  try {
    const files = await extractLayer(client, label, layer, staging, limits, options.signal);
    if (files !== config.files)
      throw new PluginArtifactError(label, `the config counts ${config.files} files, the layer holds ${files}`);
    const validation = await validatePlugin(staging);
    if (validation.findings.some((finding) => finding.severity === 'error')) {
      throw new PluginPackageInvalidError(label, 'the pulled package', validation.findings);
    }
    await chmod(staging, 0o755);
    await placeFolder(label, staging, target);
    return { ref: label, dir: target, digest: found.digest, config, validation };
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

/** `dir` may be absent or an empty folder; anything else is left alone and refused. */
async function checkDestination(label: string, target: string): Promise<void> {
  const info = await lstat(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (info === undefined) return;
  if (!info.isDirectory() || (await readdir(target)).length > 0) throw new PluginDestinationError(label, target);
}

/**
 * One rename puts the finished package in place. rename(2) replaces an empty folder
 * atomically and fails on a non-empty one, so a destination filled since checkDestination is
 * never overwritten.
 */
async function placeFolder(label: string, staging: string, target: string): Promise<void> {
  try {
    await rename(staging, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR')
      throw new PluginDestinationError(label, target);
    throw error;
  }
}

/** Streams the layer into `staging` through readArchive; returns the number of files written. */
async function extractLayer(
  client: OciClient,
  label: string,
  layer: Descriptor,
  staging: string,
  limits: Required<PullLimits>,
  signal: AbortSignal | undefined,
): Promise<number> {
  let files = 0;
  try {
    // Streamed with its digest checked at the end; the descriptor's size is the most read.
    await readLayerBlob(
      client,
      layer,
      { maxBytes: limits.maxUnpackedBytes, maxFiles: limits.maxFiles, links: 'refuse' },
      {
        async directory(path) {
          await mkdir(join(staging, ...path.split('/')), { recursive: true, mode: 0o755 });
        },
        async file(file, body) {
          const abs = join(staging, ...file.path.split('/'));
          await mkdir(dirname(abs), { recursive: true, mode: 0o755 });
          // 'wx': readArchive refuses duplicates already; this keeps a second write from ever replacing a file.
          const handle = await open(abs, 'wx', 0o600);
          try {
            for await (const chunk of body) await handle.write(chunk);
          } finally {
            await handle.close();
          }
          // Exactly 0644 or 0755, as push packed it, whatever the umask.
          await chmod(abs, file.executable ? 0o755 : 0o644);
          files += 1;
        },
      },
      signal,
    );
  } catch (error) {
    throw explainFailure(error, label, limits);
  }
  return files;
}

/** An archive refused by the safe reader, as this package's typed errors; anything else (a registry error) unchanged. */
function explainFailure(error: unknown, label: string, limits: Required<PullLimits>): unknown {
  if (!(error instanceof ArchiveError)) return error;
  switch (error.reason) {
    case 'too-large':
      return new PluginTooLargeError(
        label,
        'unpacked',
        limits.maxUnpackedBytes,
        `the layer is too large once inflated: ${error.message}`,
        undefined,
        { cause: error },
      );
    case 'entry-too-large':
      return new PluginTooLargeError(
        label,
        'file',
        limits.maxUnpackedBytes,
        `a file of the layer is too large: ${error.message}`,
        undefined,
        { cause: error },
      );
    case 'too-many-files':
      return new PluginTooLargeError(
        label,
        'files',
        limits.maxFiles,
        `the layer holds too many files: ${error.message}`,
        undefined,
        { cause: error },
      );
    default:
      return new PluginLayerUnsafeError(label, error.reason, error.entry, error.message, { cause: error });
  }
}

function definedOnly(limits: PullLimits | undefined): Partial<PullLimits> {
  return Object.fromEntries(Object.entries(limits ?? {}).filter(([, value]) => value !== undefined));
}
