export { resolveRun } from './resolve.js';
export { parseRun, looksLikeShell } from './parse.js';
export type { RunOptions, RunValue } from './parse.js';
export { DEFAULT_RUNNERS } from './runners.js';
export { assertRunFileInBundle } from './in-bundle.js';
export { RunResolutionError, RunFileMissingError } from './errors.js';
