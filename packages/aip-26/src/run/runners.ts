/**
 * Runner by file extension: the argv placed before the file (AIP-26 "run — three forms",
 * the seed's step 3). Matching is exact and case-sensitive, as Node and tsx decide a file's
 * module kind by its exact extension (`.MJS` is not ESM to Node).
 */
export type RunnerTable = Readonly<Record<string, readonly [string, ...string[]]>>;

export const DEFAULT_RUNNERS: RunnerTable = Object.freeze({
  '.ts': ['npx', '--yes', 'tsx'],
  '.tsx': ['npx', '--yes', 'tsx'],
  '.mts': ['npx', '--yes', 'tsx'],
  '.js': ['node'],
  '.mjs': ['node'],
  '.cjs': ['node'],
  '.py': ['python'],
  '.sh': ['bash'],
});

/** The runner for an extension, without ever reading an inherited property. */
export function runnerFor(runners: RunnerTable, extension: string): readonly [string, ...string[]] | undefined {
  return Object.hasOwn(runners, extension) ? runners[extension] : undefined;
}
