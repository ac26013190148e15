import { type PackageFile, SIDECAR, byteOrder, contentHash } from '../bundle/include.js';
import { buildPlugin, type BuildOptions } from '../build/build.js';
import { type Drift, driftBetween, parseSidecar } from '../build/sidecar.js';
import type { PluginConfig } from '../config/types.js';
import { openPluginReader } from '../read/reader.js';

export interface PluginVerification extends Drift {
  /** True when the folder holds exactly what the configuration builds now. */
  ok: boolean;
  /** Files whose bytes no longer match the hash the sidecar recorded: edited after generation. */
  edited: string[];
}

/**
 * Compares a package folder with what `config` builds now: a file with other bytes, a
 * file that is gone, a file the configuration no longer makes. The sidecar is checked on
 * its own too, so an edit shows as `edited` even when the configuration changed as well.
 * Files are read through the safe reader: a link out of the folder is never followed.
 */
export async function verifyPlugin(dir: string, config: PluginConfig, options: BuildOptions): Promise<PluginVerification> {
  const expected = await buildPlugin(config, options);
  const actual = await readPackageFiles(dir);
  const drift = driftBetween(expected.files, actual);
  const edited: string[] = [];
  const sidecarBytes = actual.get(SIDECAR);
  const sidecar = sidecarBytes ? parseSidecar(sidecarBytes) : undefined;
  for (const [path, hash] of Object.entries(sidecar?.files ?? {})) {
    const bytes = actual.get(path);
    if (bytes !== undefined && contentHash(bytes) !== hash) edited.push(path);
  }
  edited.sort(byteOrder);
  const ok = drift.changed.length === 0 && drift.missing.length === 0 && drift.unexpected.length === 0 && edited.length === 0;
  return { ok, ...drift, edited };
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

export type { PackageFile };
