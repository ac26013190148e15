// Push and pull load the registry client, the packing code and the archive streams only when
// called, so a host (or the command line) that reads and validates packages never loads them.
import type { PulledPlugin, PullPluginOptions } from './pull.js';
import type { PushedPlugin, PushPluginOptions } from './push.js';

/**
 * Pushes the plugin package folder `dir` to `reference` (`host[:port]/repository:tag`) as an
 * OCI artifact: a small JSON config and one deterministic tar.gz layer of the clean package.
 *
 * Nothing is uploaded until the package has passed every check, in this order:
 * 1. validatePlugin(dir): any error finding refuses it (PLUGIN_OCI_INVALID_PACKAGE).
 * 2. A link or special file anywhere in the folder refuses it (PLUGIN_OCI_UNSUPPORTED_ENTRY):
 *    a pulled package must hold exactly what was pushed, and a link would hold something else.
 * 3. The clean package is emitted the way `emitPlugin` writes one: read back as a client loads
 *    it (importPlugin), built again, written whole and validated. Whatever a client would skip
 *    is reported, not shipped, and the generated sidecar is left out: it records hashes for
 *    `verify` in the project that built the package and means nothing to a consumer.
 *
 * The layer, then the config, then the manifest are uploaded; the tag moves last, so a reader
 * of the tag sees the old artifact or the whole new one. Registry failures are RegistryError.
 *
 * @example
 * const pushed = await pushPlugin('dist/acme.tools', 'ghcr.io/acme/plugins/acme-tools:1.2.0', {
 *   auth: () => ({ username: 'acme', password: process.env.GHCR_TOKEN ?? '' }),
 * });
 * console.log(pushed.pinned); // ghcr.io/acme/plugins/acme-tools@sha256:…
 *
 * @throws PluginPackageInvalidError `PLUGIN_OCI_INVALID_PACKAGE`: the folder has an error finding.
 * @throws PluginEntryUnsupportedError `PLUGIN_OCI_UNSUPPORTED_ENTRY`: a link or special file in the folder.
 * @throws RegistryError (from @agentproto/oci) `REGISTRY_INVALID` (a reference without a tag, or
 * with a digest) and the other `REGISTRY_*` codes for the registry's refusals and failures.
 */
export async function pushPlugin(
  dir: string,
  reference: string,
  options: PushPluginOptions = {},
): Promise<PushedPlugin> {
  const { pushArtifact } = await import('./push.js');
  return pushArtifact(dir, reference, options);
}

/**
 * Pulls the plugin artifact `reference` (`host[:port]/repository:tag`, or `…@sha256:…`; with
 * both, the digest wins) into `dir`, which must not exist or be an empty folder.
 *
 * The manifest is checked against its digest, then against what push writes (artifact type,
 * media types, one layer, sizes within `limits`) before any blob is read. The layer is
 * streamed through the safe archive reader (no `..`, absolute names, links, devices or
 * duplicates; limits counted while inflating) into a fresh folder beside `dir`, its digest
 * checked at the end of the stream; the package is validated there, and only a package with
 * no error finding is renamed to `dir`. On any failure the folder is removed: `dir` shows
 * nothing or the whole package, never part of one.
 *
 * @example
 * const pulled = await pullPlugin('ghcr.io/acme/plugins/acme-tools:1.2.0', 'plugins/acme.tools');
 * console.log(pulled.digest, pulled.validation.skills);
 *
 * @throws PluginNotFoundError `PLUGIN_OCI_NOT_FOUND`: no artifact under the reference.
 * @throws PluginArtifactError `PLUGIN_OCI_NOT_A_PLUGIN`: the artifact is not what pushPlugin writes.
 * @throws PluginTooLargeError `PLUGIN_OCI_TOO_LARGE`: over one of `limits`.
 * @throws PluginLayerUnsafeError `PLUGIN_OCI_UNSAFE_LAYER`: a `..`, absolute, link, device or duplicate entry.
 * @throws PluginPackageInvalidError `PLUGIN_OCI_INVALID_PACKAGE`: the pulled package has an error finding.
 * @throws PluginDestinationError `PLUGIN_OCI_DESTINATION_EXISTS`: `dir` exists and is not an empty folder.
 * @throws RegistryError (from @agentproto/oci) `REGISTRY_*`: a bad reference, a refusal or a network failure.
 */
export async function pullPlugin(
  reference: string,
  dir: string,
  options: PullPluginOptions = {},
): Promise<PulledPlugin> {
  const { pullArtifact } = await import('./pull.js');
  return pullArtifact(reference, dir, options);
}
