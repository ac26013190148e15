import { parseUntrustedJson } from '@agentproto/content-cache';
import { type PackageFile, SIDECAR, byteOrder, contentHash } from '../bundle/include.js';
import { renderJson } from './render.js';

/**
 * The provenance sidecar: every generated file with its content hash. It is written last,
 * over the files in byte order, so the same package always has the same sidecar, and
 * `verify` can tell an edited or missing file from the hashes alone.
 */
export interface Sidecar {
  generator: string;
  spec: string;
  files: Record<string, string>;
}

export const GENERATOR = '@agentproto/agent-plugins';

export function renderSidecar(spec: string, files: ReadonlyMap<string, PackageFile>): PackageFile {
  const hashes: Record<string, string> = {};
  for (const path of [...files.keys()].filter((path) => path !== SIDECAR).sort(byteOrder)) hashes[path] = contentHash(files.get(path)!.bytes);
  const sidecar: Sidecar = { generator: GENERATOR, spec, files: hashes };
  return { bytes: renderJson(sidecar), mode: 0o644 };
}

/** The sidecar's record, or undefined when the bytes are not one. */
export function parseSidecar(bytes: Uint8Array): Sidecar | undefined {
  try {
    // The sidecar of a package someone else wrote: bounded like every untrusted document.
    const value = parseUntrustedJson(bytes, { source: SIDECAR }) as Partial<Sidecar> | null;
    if (value === null || typeof value !== 'object') return undefined;
    if (typeof value.generator !== 'string' || typeof value.spec !== 'string' || value.files === null || typeof value.files !== 'object') return undefined;
    if (Object.values(value.files).some((hash) => typeof hash !== 'string')) return undefined;
    return value as Sidecar;
  } catch {
    return undefined;
  }
}

export interface Drift {
  /** Recorded and present, with other bytes. */
  changed: string[];
  /** Recorded, and gone. */
  missing: string[];
  /** Expected from the configuration, and not recorded or not present. */
  unexpected: string[];
}

/**
 * What differs between the files a configuration builds now (`expected`) and a package on
 * disk (`actual`, by path): a file with other bytes, a file that is gone, a file that the
 * package holds but the configuration no longer makes.
 */
export function driftBetween(expected: ReadonlyMap<string, PackageFile>, actual: ReadonlyMap<string, Uint8Array>): Drift {
  const changed: string[] = [];
  const missing: string[] = [];
  const unexpected: string[] = [];
  for (const [path, file] of expected) {
    const bytes = actual.get(path);
    if (bytes === undefined) missing.push(path);
    else if (Buffer.compare(Buffer.from(bytes), Buffer.from(file.bytes)) !== 0) changed.push(path);
  }
  for (const path of actual.keys()) if (!expected.has(path)) unexpected.push(path);
  return { changed: changed.sort(byteOrder), missing: missing.sort(byteOrder), unexpected: unexpected.sort(byteOrder) };
}
