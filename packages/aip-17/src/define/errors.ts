/** One thing wrong with a runner block: where (a JSON pointer into the block) and what. */
export interface RunnerProblem {
  /** JSON pointer (RFC 6901) into the runner block, e.g. `/limits/memory_mb`; `''` is the whole block. */
  readonly pointer: string;
  /** For humans: what is wrong, in one sentence, without the pointer. */
  readonly message: string;
}

/** How many problems the message lists; `problems` always holds all of them. */
const LISTED = 10;

/**
 * A runner block fails the AIP-17 schema (or a rule beside it, such as `needs.language`
 * contradicting the `run` file). The message names the first offending pointer.
 */
export class RunnerDefinitionError extends Error {
  readonly code = 'AIP17_RUNNER_INVALID';
  /** Every problem found, in the schema's order. */
  readonly problems: readonly RunnerProblem[];
  constructor(problems: readonly RunnerProblem[], options: { subject?: string; cause?: unknown } = {}) {
    const lines = problems.slice(0, LISTED).map((p, i) => `${i === 0 ? 'at ' : ''}${p.pointer || '/'}: ${p.message}`);
    if (problems.length > LISTED) lines.push(`… and ${problems.length - LISTED} more`);
    super(
      `${options.subject ?? 'runner'} invalid ${lines.join('; ')}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'RunnerDefinitionError';
    this.problems = problems;
  }
}

/**
 * A `{ ref }` or `{ file }` runner block could not be resolved: the host passed no resolver
 * for that form, or its resolver failed (the failure is the `cause`).
 */
export class RunnerUnresolvedError extends Error {
  readonly code = 'AIP17_RUNNER_UNRESOLVED';
  /** Which composition form was asked for. */
  readonly form: 'ref' | 'file';
  /** The ref or the workspace-relative path, as the manifest wrote it. */
  readonly target: string;
  constructor(form: 'ref' | 'file', target: string, reason: string, options: { cause?: unknown } = {}) {
    super(
      `runner ${form} ${JSON.stringify(target)} cannot be resolved: ${reason}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'RunnerUnresolvedError';
    this.form = form;
    this.target = target;
  }
}

/** The codes of `RunnerImageError`. */
export type RunnerImageErrorCode = 'AIP17_IMAGE_UNKNOWN' | 'AIP17_IMAGE_UNRESOLVED';

/**
 * A sandbox runner has no image: the named one is not in the host's registry
 * (`AIP17_IMAGE_UNKNOWN`), or none fits its needs (`AIP17_IMAGE_UNRESOLVED`). `available`
 * lists the registry's ids so an author can correct the manifest.
 */
export class RunnerImageError extends Error {
  readonly code: RunnerImageErrorCode;
  /** The image the manifest named; undefined when it asked for an auto-pick. */
  readonly image: string | undefined;
  /** The ids of the host's registry, sorted. */
  readonly available: readonly string[];
  constructor(
    code: RunnerImageErrorCode,
    details: { image?: string; available: readonly string[]; reason: string },
    options: { cause?: unknown } = {},
  ) {
    const list = details.available.length === 0 ? 'none' : details.available.join(', ');
    super(
      `${details.reason} (available images: ${list})`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'RunnerImageError';
    this.code = code;
    this.image = details.image;
    this.available = details.available;
  }
}

/**
 * What the host passed to `defineRunner` is unusable: a default cap that is not a positive
 * integer, a registry entry without an id, two registry entries with one id. `option` names it.
 */
export class RunnerHostError extends Error {
  readonly code = 'AIP17_HOST_INVALID';
  /** The offending host option, e.g. `defaults.memory_mb` or `images/2/id`. */
  readonly option: string;
  constructor(option: string, reason: string, options: { cause?: unknown } = {}) {
    super(`host option ${option} ${reason}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RunnerHostError';
    this.option = option;
  }
}
