/** One thing wrong with a manifest, found by the schema check. */
export interface SchemaProblem {
  /** JSON pointer (RFC 6901) of the offending value, e.g. `/code/sources/0/inline/path`; `''` is the whole value. */
  readonly pointer: string;
  /** For humans: what is wrong, in one sentence, without the pointer. */
  readonly message: string;
  /** The JSON Schema keyword that failed (`required`, `type`, `oneOf`, …). */
  readonly keyword: string;
}

export type CheckResult = { readonly ok: true } | { readonly ok: false; readonly problems: readonly SchemaProblem[] };

/** How many problems the message lists; `problems` always holds all of them. */
const LISTED = 10;

/** A manifest's `code` or `run` block (or a whole code-workspace manifest) fails the AIP-26 schema. */
export class ManifestValidationError extends Error {
  readonly code = 'AIP26_MANIFEST_INVALID';
  readonly problems: readonly SchemaProblem[];
  constructor(problems: readonly SchemaProblem[], options: { subject?: string; cause?: unknown } = {}) {
    const lines = problems.slice(0, LISTED).map((p) => `${p.pointer || '/'}: ${p.message}`);
    if (problems.length > LISTED) lines.push(`… and ${problems.length - LISTED} more`);
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    super(
      `${options.subject ?? 'manifest'} invalid (${count}): ${lines.join('; ')}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'ManifestValidationError';
    this.problems = problems;
  }
}
