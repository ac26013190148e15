import type { PathKind } from './errors.js';
import { type NormalizedPath, normalizePath } from './normalize.js';

/** Every manifest field that holds a path (AIP-26 "Path semantics", plus `run`). */
export type ManifestPathField =
  | 'code'
  | 'inline.path'
  | 'local.path'
  | 'local.as'
  | 'github.path'
  | 'github.as'
  | 'ref.path'
  | 'run.file';

export interface FieldRule {
  readonly kind: PathKind;
  /** `.` / `./` accepted as the root. */
  readonly allowRoot: boolean;
  /** Must name a file: no trailing `/`, no root. */
  readonly file: boolean;
}

/**
 * The rule for each field, in one table (the spec's "Path semantics" table, with two
 * decisions of ours on the root):
 * - `github.path`, `local.as`, `github.as` accept `.`/`./`: the repository root is
 *   `github.path`'s default, and the bundle root is a natural target for a folder.
 * - `code`, `ref.path` and `local.path` refuse the root: `local: .` would copy the whole
 *   workspace (other tools, drafts, private files) into the bundle, and a code-workspace
 *   lives in a folder of its own. Name the folder instead.
 * - `inline.path` and the `run` file name a file: no root, no trailing `/`.
 */
export const FIELD_RULES: Readonly<Record<ManifestPathField, FieldRule>> = Object.freeze({
  code: { kind: 'workspace', allowRoot: false, file: false },
  'ref.path': { kind: 'workspace', allowRoot: false, file: false },
  'local.path': { kind: 'workspace', allowRoot: false, file: false },
  'local.as': { kind: 'bundle', allowRoot: true, file: false },
  'github.path': { kind: 'remote', allowRoot: true, file: false },
  'github.as': { kind: 'bundle', allowRoot: true, file: false },
  'inline.path': { kind: 'bundle', allowRoot: false, file: true },
  'run.file': { kind: 'bundle', allowRoot: false, file: true },
});

/** Normalises the value of one manifest field by that field's rule; errors name the field. */
export function normalizeManifestPath(field: ManifestPathField, input: string): NormalizedPath {
  const rule = FIELD_RULES[field];
  return normalizePath(rule.kind, input, { allowRoot: rule.allowRoot, file: rule.file, field });
}
