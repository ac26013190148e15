import { isDotGit } from '@agentproto/archive';
import { minimatch } from '#libraries';
import { type Finding, findingFrom } from '../findings.js';
import { BUNDLE_FINDING_CODES } from './codes.js';
import { byteOrder } from '../text.js';

export { byteOrder };

/** A file of a package in memory: its bytes and its mode (only the executable bit matters). */
export interface PackageFile {
  bytes: Uint8Array;
  mode: 0o644 | 0o755;
}

/** The provenance sidecar: every generated file with its content hash, so verify sees drift. */
export const SIDECAR = '.agentproto-generated.json';

/**
 * What an include glob can never match, however broad: the manifest, mcp.json, the skills
 * tree and the sidecar. Each is generated from its own source, and a copied file must not
 * replace it.
 */
const RESERVED = ['plugin.json', 'mcp.json', SIDECAR];
const RESERVED_TREES = ['skills/'];

/** A glob matches paths, so it is no longer than a path may be (Linux PATH_MAX). */
const MAX_GLOB_LENGTH = 4096;

/**
 * Why an include glob is refused at configuration load, or undefined when it is fine. A glob
 * is relative to the content root and cannot climb out of it: absolute (`/x`, `\x`), a drive
 * letter (`C:`), a `..` segment, a backslash, or NUL.
 */
export function includeGlobProblem(glob: string): string | undefined {
  if (typeof glob !== 'string' || glob.trim() === '') return 'is empty';
  // minimatch itself would throw a bare TypeError past 64 KiB, after the load accepted it.
  if (glob.length > MAX_GLOB_LENGTH) return `is longer than ${MAX_GLOB_LENGTH} characters`;
  if (glob.includes('\0')) return 'contains NUL';
  if (glob.startsWith('/') || glob.startsWith('\\')) return 'is absolute';
  if (/^[A-Za-z]:/.test(glob)) return 'starts with a drive letter';
  if (glob.includes('\\')) return 'contains a backslash (use "/")';
  if (glob.split('/').includes('..')) return 'contains a ".." segment';
  return undefined;
}

/**
 * The files of `root` (paths relative to the content root, `/`-separated) that `globs`
 * select, in byte order: `**` crosses folders, `*` and `?` do not, a trailing `/` takes
 * everything below the folder, dot files are matched like any other. Reserved names are
 * never selected. A glob that is refused or matches nothing gives a finding; the others
 * still apply.
 */
export function selectIncluded(
  paths: Iterable<string>,
  globs: readonly string[],
): { selected: string[]; findings: Finding[] } {
  const findings: Finding[] = [];
  const candidates = [...paths].filter((path) => !isReserved(path));
  const selected = new Set<string>();
  for (const [index, glob] of globs.entries()) {
    const problem = includeGlobProblem(glob);
    if (problem !== undefined) {
      findings.push(
        findingFrom(
          BUNDLE_FINDING_CODES,
          'bundle.glob-escapes',
          `plugin#/include/${index}`,
          `include glob ${index + 1} ${problem}`,
        ),
      );
      continue;
    }
    const pattern = glob.endsWith('/') ? `${glob}**` : glob;
    let matched = 0;
    for (const path of candidates) {
      // dot: a file named .env is a file like any other; the author asked for the folder.
      if (minimatch().minimatch(path, pattern, { dot: true, nonegate: true, nocomment: true })) {
        selected.add(path);
        matched += 1;
      }
    }
    if (matched === 0)
      findings.push(
        findingFrom(
          BUNDLE_FINDING_CODES,
          'bundle.glob-empty',
          `plugin#/include/${index}`,
          `include glob ${index + 1} matched no file`,
        ),
      );
  }
  return { selected: [...selected].sort(byteOrder), findings };
}

function isReserved(path: string): boolean {
  // A .git entry (any spelling git refuses) is never a file of a package, whatever a glob says.
  return (
    RESERVED.includes(path) || RESERVED_TREES.some((tree) => path.startsWith(tree)) || path.split('/').some(isDotGit)
  );
}
