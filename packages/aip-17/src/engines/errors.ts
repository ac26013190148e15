export type RunnerNeedsErrorCode = 'AIP17_NEEDS_UNSUPPORTED' | 'AIP17_NEEDS_MISSING';

/**
 * A sandbox cannot honour the runner's `needs`: it cannot install that kind of need at all
 * (`AIP17_NEEDS_UNSUPPORTED`: npm and pip packages with no network install), or a runtime or
 * OS package is not there (`AIP17_NEEDS_MISSING`). `needs` names every offending entry as
 * `npm:<pkg>`, `pip:<pkg>`, `native:<pkg>` or `language:<lang>`.
 */
export class RunnerNeedsError extends Error {
  readonly code: RunnerNeedsErrorCode;
  /** The sandbox template that refused, e.g. `local-bubblewrap`. */
  readonly image: string;
  /** Every need refused, e.g. `npm:left-pad@1.3.0`, `native:libvips`, `language:python`. */
  readonly needs: readonly string[];
  constructor(code: RunnerNeedsErrorCode, image: string, needs: readonly string[], reason: string) {
    super(`sandbox ${image} cannot honour needs ${needs.join(', ')}: ${reason}`);
    this.name = 'RunnerNeedsError';
    this.code = code;
    this.image = image;
    this.needs = needs;
  }
}

/**
 * The resolved engine cannot run this request: `in-process` with a `run` that is not a node
 * module file (`.js`, `.mjs`, `.cjs`), or `sandbox` with no driver given to `createRunner`.
 */
export class RunnerEngineError extends Error {
  readonly code = 'AIP17_ENGINE_UNSUPPORTED';
  /** The engine after the downgrade rule. */
  readonly engine: string;
  /** What was asked for: the `run` value as JSON, or the missing option. */
  readonly subject: string;
  constructor(engine: string, subject: string, reason: string, options: { cause?: unknown } = {}) {
    super(
      `engine ${engine} cannot run ${subject}: ${reason}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'RunnerEngineError';
    this.engine = engine;
    this.subject = subject;
  }
}
