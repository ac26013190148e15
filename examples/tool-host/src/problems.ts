import {
  BundleSizeError,
  type Code,
  ManifestValidationError,
  RunFileMissingError,
  RunnerConflictError,
  SourceResolutionError,
} from '@agentproto/aip-26';
import type { RegistrationProblem } from './errors.js';

/**
 * The registration problems an error of `scanCode` stands for, or undefined when it is not
 * about the manifest (a full disk, a bug): those are the host's failures and are rethrown.
 */
export function problemsOf(error: unknown, code: Code): RegistrationProblem[] | undefined {
  if (error instanceof ManifestValidationError) {
    return error.problems.map((p) => ({ code: error.code, pointer: p.pointer, reason: p.keyword, message: p.message }));
  }
  if (error instanceof SourceResolutionError) {
    return [
      {
        code: error.code,
        pointer: pointerOf(error.source, code),
        source: error.source,
        reason: error.reason,
        message: error.message,
      },
    ];
  }
  if (error instanceof BundleSizeError) {
    return [
      {
        code: error.code,
        pointer: pointerOf(error.source, code),
        source: error.source,
        reason: error.limit,
        message: error.message,
      },
    ];
  }
  if (error instanceof RunFileMissingError) {
    return [{ code: error.code, pointer: '/run', reason: 'not-in-bundle', message: error.message }];
  }
  if (error instanceof RunnerConflictError) {
    return [{ code: error.code, pointer: '/runner', reason: error.field, message: error.message }];
  }
  return undefined;
}

/**
 * The top-level source a label starts from: `sources[2] → ref "lib" → sources[0]` came from
 * `sources[2]` of the manifest. Undefined for a label that is not a source's.
 */
export function topLevelIndex(label: string): number | undefined {
  const match = /^sources\[(\d+)\]/.exec(label);
  return match ? Number(match[1]) : undefined;
}

/**
 * The manifest's JSON pointer for a source label: the top-level declaration that led to it
 * (a source inside a referenced code-workspace is not in the manifest). The string shorthand
 * `code: "./lib"` is one `ref` source at `/code`.
 */
export function pointerOf(label: string, code: Code): string {
  const index = topLevelIndex(label);
  if (index === undefined) return '/code';
  return typeof code === 'string' ? '/code' : `/code/sources/${index}`;
}

/**
 * A problem found by scanning `sources[j]` alone (where it is `sources[0]`), labelled as
 * the source it is in the manifest. Only the leading label is rewritten: a `ref` chain
 * after it names sources inside the code-workspace, which keep their own indexes.
 */
export function relabel(problem: RegistrationProblem, index: number): RegistrationProblem {
  const own = `sources[${index}]`;
  const swap = (text: string) => (text.startsWith('sources[0]') ? own + text.slice('sources[0]'.length) : text);
  return {
    ...problem,
    pointer: `/code/sources/${index}`,
    ...(problem.source !== undefined ? { source: swap(problem.source) } : {}),
    message: swap(problem.message),
  };
}
