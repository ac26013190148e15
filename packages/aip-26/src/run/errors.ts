export type RunProblem =
  | 'invalid-shape'
  | 'ambiguous'
  | 'empty'
  | 'nul'
  | 'unbalanced-quote'
  | 'unknown-extension'
  | 'invalid-bundle-root';

const MESSAGE_VALUE_CHARS = 200;

function show(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > MESSAGE_VALUE_CHARS ? `${text.slice(0, MESSAGE_VALUE_CHARS)}…` : text;
}

/**
 * A `run` block that cannot be turned into a command. `value` is the block (or the part of
 * it) at fault, `reason` is stable; for `unknown-extension`, `extension` is what was found
 * (`''` when the file has none).
 */
export class RunResolutionError extends Error {
  readonly code = 'AIP26_RUN_INVALID';
  readonly reason: RunProblem;
  readonly value: unknown;
  readonly extension: string | undefined;
  constructor(
    reason: RunProblem,
    value: unknown,
    detail: string,
    options: { extension?: string; cause?: unknown } = {},
  ) {
    super(`run ${show(value)}: ${detail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RunResolutionError';
    this.reason = reason;
    this.value = value;
    this.extension = options.extension;
  }
}

/** The `run` file is not in the bundle. `didYouMean` is a bundle file that differs only by case. */
export class RunFileMissingError extends Error {
  readonly code = 'AIP26_RUN_FILE_MISSING';
  readonly file: string;
  readonly didYouMean: string | undefined;
  constructor(file: string, didYouMean?: string) {
    const hint =
      didYouMean === undefined
        ? ''
        : ` (the bundle has ${JSON.stringify(didYouMean)}, which differs only by letter case)`;
    super(`run file ${JSON.stringify(file)} is not in the bundle${hint}`);
    this.name = 'RunFileMissingError';
    this.file = file;
    this.didYouMean = didYouMean;
  }
}
