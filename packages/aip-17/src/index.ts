// AIP-17 `runner` block for a host: check a manifest's runner, apply defaults and the downgrade rule.
// Every name here is a promise to hosts; the parts these stand on stay inside the package.

// Define a runner
export { defineRunner } from './define/define-runner.js';
export { validateRunner } from './define/validate-runner.js';
export { loadRunnerBlock } from './define/load-runner-block.js';
export { migrateLegacyRuntime } from './define/legacy.js';

// Errors a host can catch (each with a stable `code`)
export { RunnerDefinitionError, RunnerHostError, RunnerImageError, RunnerUnresolvedError } from './define/errors.js';

// Types a host passes or receives
export type {
  ResolvedRunnerHandle,
  RunnerDefaults,
  RunnerDefinition,
  RunnerEngine,
  RunnerHandle,
  RunnerHost,
  RunnerLanguage,
  RunnerLimits,
  RunnerLogger,
  SandboxTemplate,
} from './define/types.js';
export type { RunnerValidation } from './define/validate-runner.js';
export type { RunnerBlockResolvers } from './define/load-runner-block.js';
export type { MigratedRuntime, MigrateOptions } from './define/legacy.js';

// Types of the errors' fields
export type { RunnerImageErrorCode, RunnerProblem } from './define/errors.js';
