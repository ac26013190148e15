import { parseUntrustedJson } from '@agentproto/documents';
import { withoutBom } from '../text.js';
import { contentHash } from '../bundle/hash.js';
import { SIDECAR, byteOrder } from '../bundle/include.js';
import { buildPlugin, type BuildOptions } from '../build/build.js';
import { renderJson } from '../build/render.js';
import { type Drift, type OmittedEntry, driftBetween, parseSidecar } from '../build/sidecar.js';
import type { PluginConfig } from '../config/types.js';
import { isPlainObject } from '../values.js';
import { openPluginReader } from '../read/node.js';
import { PACKAGE_JSON, packageJsonDrift } from '../runtimes/package-json.js';

export interface PluginVerification extends Drift {
  /**
   * True when the folder holds exactly what the configuration builds now, and its build left
   * nothing out (`omitted` is empty).
   */
  ok: boolean;
  /**
   * What the folder's sidecar records its build left out (a server, a skill, a field that broke
   * a rule), in the sidecar's order. A package that is byte for byte what the configuration
   * builds still lacks these, so it is not `ok`.
   */
  omitted: OmittedEntry[];
  /** Files whose bytes no longer match the hash the sidecar recorded: edited after generation. */
  edited: string[];
  /**
   * Where package.json drifted, as packageJsonDrift gives it: `["package.json"]` for any byte
   * difference when the product owns the file, the owned keys' pointers
   * (`package.json#/version`, …) under Pi's "merge". Absent when the configuration writes no
   * package.json.
   */
  packageJson?: string[];
}

/**
 * Compares a package folder with what `config` builds now: a file with other bytes, a
 * file that is gone, a file the configuration no longer makes. The sidecar is checked on
 * its own too, so an edit shows as `edited` even when the configuration changed as well.
 * Files are read through the safe reader: a link out of the folder is never followed.
 *
 * package.json (the opencode and pi runtimes) is compared with packageJsonDrift in the
 * configured mode. Owned ("own", and always with opencode): any byte difference is drift,
 * like any other file. Pi's "merge": the expected file is built on the folder's own
 * package.json (`options.existingPackageJson` is replaced by it), and only the owned keys
 * count. The project's keys are the project's to edit, so a change to them is neither
 * `changed` nor `edited`; for the same reason package.json's hash in the sidecar is not held
 * against the folder, which the sidecar recorded before the project's edits. A folder
 * package.json that is not a JSON object is not merged into: the whole file is expected.
 */
export async function verifyPlugin(
  dir: string,
  config: PluginConfig,
  options: BuildOptions,
): Promise<PluginVerification> {
  const actual = await readPackageFiles(dir);
  const current = actual.get(PACKAGE_JSON);
  const expected = await buildPlugin(config, {
    ...options,
    existingPackageJson: current !== undefined && isJsonObject(current) ? current : undefined,
  });
  const drift = driftBetween(expected.files, actual);
  const wanted = expected.files.get(PACKAGE_JSON);
  // buildPlugin refuses merge with opencode, so merge here is Pi's alone.
  const merge = wanted !== undefined && config.pi?.packageJson === 'merge' && (config.runtimes ?? []).includes('pi');
  let packageJson: string[] | undefined;
  if (wanted !== undefined) {
    packageJson = packageJsonDrift(wanted.bytes, current, merge ? 'merge' : 'own');
    drift.changed = drift.changed.filter((path) => path !== PACKAGE_JSON);
    if (current !== undefined && packageJson.length > 0)
      drift.changed = [...drift.changed, PACKAGE_JSON].sort(byteOrder);
  }
  const sidecarBytes = actual.get(SIDECAR);
  const sidecar = sidecarBytes ? parseSidecar(sidecarBytes) : undefined;
  if (
    merge &&
    sidecar !== undefined &&
    drift.changed.includes(SIDECAR) &&
    sameButPackageJson(expected.files.get(SIDECAR)?.bytes, sidecar)
  ) {
    drift.changed = drift.changed.filter((path) => path !== SIDECAR);
  }
  const edited: string[] = [];
  for (const [path, hash] of Object.entries(sidecar?.files ?? {})) {
    if (merge && path === PACKAGE_JSON) continue;
    const bytes = actual.get(path);
    if (bytes !== undefined && contentHash(bytes) !== hash) edited.push(path);
  }
  edited.sort(byteOrder);
  const omitted = sidecar?.omitted ?? [];
  const ok =
    drift.changed.length === 0 &&
    drift.missing.length === 0 &&
    drift.unexpected.length === 0 &&
    edited.length === 0 &&
    omitted.length === 0;
  return { ok, ...drift, edited, omitted, ...(packageJson === undefined ? {} : { packageJson }) };
}

function isJsonObject(bytes: Uint8Array): boolean {
  try {
    return isPlainObject(parseUntrustedJson(withoutBom(bytes), { source: 'package.json' }));
  } catch {
    return false;
  }
}

/**
 * Whether the folder's sidecar is the expected one but for package.json's hash: under
 * "merge" that hash covers the project's keys too, which may change freely. package.json
 * must still be recorded in both, so a sidecar that lost the entry is drift.
 */
function sameButPackageJson(
  expectedBytes: Uint8Array | undefined,
  actual: NonNullable<ReturnType<typeof parseSidecar>>,
): boolean {
  const expected = expectedBytes ? parseSidecar(expectedBytes) : undefined;
  const hash = expected?.files[PACKAGE_JSON];
  if (
    expected === undefined ||
    expectedBytes === undefined ||
    hash === undefined ||
    !Object.hasOwn(actual.files, PACKAGE_JSON)
  )
    return false;
  const patched = { ...actual, files: { ...actual.files, [PACKAGE_JSON]: hash } };
  return Buffer.compare(Buffer.from(renderJson(patched)), Buffer.from(expectedBytes)) === 0;
}

/** Every regular file of a package folder, by path, read through the safe reader. */
export async function readPackageFiles(dir: string): Promise<Map<string, Uint8Array>> {
  const reader = openPluginReader(dir);
  const files = new Map<string, Uint8Array>();
  const walk = async (relDir: string): Promise<void> => {
    const listed = await reader.list(relDir);
    if (!listed.ok) return;
    for (const entry of listed.entries) {
      const path = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
      if (entry.kind === 'directory') await walk(path);
      else if (entry.kind === 'file' || entry.kind === 'link') {
        const read = await reader.readFile(path);
        if (read.ok) files.set(path, read.bytes);
      }
    }
  };
  await walk('');
  return files;
}
