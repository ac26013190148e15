import type { ArchiveProblem } from '@agentproto/archive';
import type { Finding } from '../findings.js';

/**
 * Why pushing or pulling a plugin artifact failed, one code per failure kind. Registry
 * failures (unreachable, auth, a digest that does not match) are not here: they pass through
 * as @agentproto/oci's RegistryError with its REGISTRY_* code.
 */
export type PluginOciErrorCode =
  | 'PLUGIN_OCI_INVALID_PACKAGE'
  | 'PLUGIN_OCI_UNSUPPORTED_ENTRY'
  | 'PLUGIN_OCI_NOT_FOUND'
  | 'PLUGIN_OCI_NOT_A_PLUGIN'
  | 'PLUGIN_OCI_TOO_LARGE'
  | 'PLUGIN_OCI_UNSAFE_LAYER'
  | 'PLUGIN_OCI_DESTINATION_EXISTS';

/**
 * The base of every plugin artifact error: a stable `code` to branch on, and the artifact
 * `reference` (`host[:port]/repository:tag` or `…@sha256:…`), which the message starts with.
 * A reference never holds a credential (parseReference refuses userinfo and schemes).
 */
export abstract class PluginOciError extends Error {
  abstract readonly code: PluginOciErrorCode;
  constructor(
    readonly reference: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${reference}: ${message}`, options);
    this.name = new.target.name;
  }
}

/**
 * The package has error findings: a conformant client would reject it or skip part of it.
 * On push nothing was uploaded; on pull nothing was placed at the destination.
 */
export class PluginPackageInvalidError extends PluginOciError {
  readonly code = 'PLUGIN_OCI_INVALID_PACKAGE';
  constructor(
    reference: string,
    /** The folder pushed, or `the pulled package`. */
    readonly source: string,
    /** Every finding, sorted; at least one is an error. */
    readonly findings: readonly Finding[],
  ) {
    const errors = findings.filter((f) => f.severity === 'error');
    const first = errors[0];
    super(
      reference,
      `${source} fails validation with ${errors.length} error finding${errors.length === 1 ? '' : 's'}${first ? ` (first: ${first.rule} ${first.code} ${first.path}: ${first.message})` : ''}`,
    );
  }
}

/** push: the package folder holds a link or a special file; a plugin artifact carries regular files only. */
export class PluginEntryUnsupportedError extends PluginOciError {
  readonly code = 'PLUGIN_OCI_UNSUPPORTED_ENTRY';
  constructor(
    reference: string,
    readonly dir: string,
    /** Package-relative, `/`-separated. */
    readonly path: string,
    readonly kind: 'symbolic link' | 'special file',
  ) {
    super(
      reference,
      `${dir}: ${path} is a ${kind}; a plugin artifact holds only regular files and folders, nothing was uploaded`,
    );
  }
}

/** pull: the registry has no manifest under that tag or digest. */
export class PluginNotFoundError extends PluginOciError {
  readonly code = 'PLUGIN_OCI_NOT_FOUND';
  constructor(reference: string) {
    super(reference, 'the registry has no artifact under this reference');
  }
}

/** pull: the artifact is not a plugin as push writes it (artifact type, media types, layers, config). */
export class PluginArtifactError extends PluginOciError {
  readonly code = 'PLUGIN_OCI_NOT_A_PLUGIN';
  constructor(
    reference: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(reference, `not an Agent Plugins artifact: ${problem}`, options);
  }
}

/** What was over its limit: the config blob, the layer blob, the layer once inflated, its file count, or one file. */
export type PluginSizePart = 'config' | 'layer' | 'unpacked' | 'files' | 'file';

/** pull: a part of the artifact is over its limit; it was refused before (or while) it was read. */
export class PluginTooLargeError extends PluginOciError {
  readonly code = 'PLUGIN_OCI_TOO_LARGE';
  constructor(
    reference: string,
    readonly part: PluginSizePart,
    readonly limit: number,
    detail: string,
    /** The size the artifact declared, when it declared one. */
    readonly size?: number,
    options?: { cause?: unknown },
  ) {
    super(reference, `${detail} (limit ${limit})`, options);
  }
}

/** pull: the layer breaks a rule of the safe archive reader (`..`, an absolute name, a link, a device, a duplicate, bad gzip). */
export class PluginLayerUnsafeError extends PluginOciError {
  readonly code = 'PLUGIN_OCI_UNSAFE_LAYER';
  constructor(
    reference: string,
    readonly reason: ArchiveProblem,
    /** The entry name as the layer spelled it, when one entry is at fault. */
    readonly entry: string | undefined,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(reference, `the layer was refused: ${detail}`, options);
  }
}

/** pull: the destination exists and is not an empty folder; it was left untouched. */
export class PluginDestinationError extends PluginOciError {
  readonly code = 'PLUGIN_OCI_DESTINATION_EXISTS';
  constructor(
    reference: string,
    readonly dir: string,
  ) {
    super(reference, `${dir} exists and is not an empty folder; pull into a new path`);
  }
}
