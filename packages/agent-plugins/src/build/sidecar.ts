import { parseUntrustedJson } from '@agentproto/documents';
import { type PackageFile, SIDECAR, byteOrder } from '../bundle/include.js';
import { type Finding, findingFrom } from '../findings.js';
import { compareBytes } from '../text.js';
import { BUILD_FINDING_CODES } from './codes.js';

/**
 * The provenance sidecar: every generated file with its content hash. It is written last,
 * over the files in byte order, so the same package always has the same sidecar, and
 * `verify` can tell an edited or missing file from the hashes alone.
 */
export interface Sidecar {
  generator: string;
  spec: string;
  files: Record<string, string>;
  /**
   * What the build left out: each error finding's code and path, sorted as the findings are.
   * Absent when nothing was left out, so a complete package's sidecar is what it always was.
   * The sidecar is the build's own root file (clients ignore it, and §8's namespace rule is
   * for client-specific files), so the record travels with the package wherever it is copied
   * and `verify` and `validate` can tell a complete package from one that lost a component.
   */
  omitted?: OmittedEntry[];
}

/** One thing a build left out: the finding code and the path it was reported at. */
export interface OmittedEntry {
  code: string;
  path: string;
}

/** The error findings as omitted entries, each once, sorted by path then code. */
export function omittedOf(findings: readonly Finding[]): OmittedEntry[] {
  const seen = new Map<string, OmittedEntry>();
  for (const f of findings)
    if (f.severity === 'error') seen.set(`${f.path}\0${f.code}`, { code: f.code, path: f.path });
  return [...seen.values()].sort((a, b) => byteOrder(a.path, b.path) || byteOrder(a.code, b.code));
}

// A recorded entry comes from a package on disk, anyone's: held to a shape and a size before
// it becomes a finding's path that a terminal prints.
const MAX_OMITTED = 10_000;
const RECORDED_TEXT = /^[^\p{Cc}]{1,1024}$/u;

/**
 * The findings a package's sidecar records as left out by its build, one
 * `package.build-omitted` error at each recorded path. None for a sidecar that is not one.
 */
export function omittedFindings(bytes: Uint8Array): Finding[] {
  const sidecar = parseSidecar(bytes);
  return (sidecar?.omitted ?? []).map((entry) =>
    findingFrom(
      BUILD_FINDING_CODES,
      'package.build-omitted',
      entry.path,
      `was left out when the package was built (${entry.code}); the build recorded it in ${SIDECAR}`,
    ),
  );
}

/** The sidecar's record, or undefined when the bytes are not one. */
export function parseSidecar(bytes: Uint8Array): Sidecar | undefined {
  try {
    // The sidecar of a package someone else wrote: bounded like every untrusted document.
    const value = parseUntrustedJson(bytes, { source: SIDECAR }) as Partial<Sidecar> | null;
    if (value === null || typeof value !== 'object') return undefined;
    if (
      typeof value.generator !== 'string' ||
      typeof value.spec !== 'string' ||
      value.files === null ||
      typeof value.files !== 'object'
    )
      return undefined;
    if (Object.values(value.files).some((hash) => typeof hash !== 'string')) return undefined;
    if (value.omitted !== undefined && !isOmittedList(value.omitted)) return undefined;
    return value as Sidecar;
  } catch {
    return undefined;
  }
}

function isOmittedList(value: unknown): value is OmittedEntry[] {
  if (!Array.isArray(value) || value.length > MAX_OMITTED) return false;
  return value.every((entry: unknown) => {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return false;
    const { code, path } = entry as Record<string, unknown>;
    return typeof code === 'string' && typeof path === 'string' && RECORDED_TEXT.test(code) && RECORDED_TEXT.test(path);
  });
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
export function driftBetween(
  expected: ReadonlyMap<string, PackageFile>,
  actual: ReadonlyMap<string, Uint8Array>,
): Drift {
  const changed: string[] = [];
  const missing: string[] = [];
  const unexpected: string[] = [];
  for (const [path, file] of expected) {
    const bytes = actual.get(path);
    if (bytes === undefined) missing.push(path);
    else if (compareBytes(bytes, file.bytes) !== 0) changed.push(path);
  }
  for (const path of actual.keys()) if (!expected.has(path)) unexpected.push(path);
  return { changed: changed.sort(byteOrder), missing: missing.sort(byteOrder), unexpected: unexpected.sort(byteOrder) };
}
