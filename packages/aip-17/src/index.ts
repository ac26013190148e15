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

// Run a bundle: isolated in bubblewrap, in-process for trusted origins, or through a sandbox driver
export { createRunner } from './runner/create-runner.js';
export { bubblewrapDriver } from './engines/bubblewrap-driver.js';
export { RunnerEngineError, RunnerNeedsError } from './engines/errors.js';
export type { BundleRunner, CreateRunnerOptions } from './runner/create-runner.js';
export type { BubblewrapBox, BubblewrapDriver, BubblewrapDriverOptions } from './engines/bubblewrap-driver.js';
export type { InProcessContext } from './engines/in-process.js';
export type { LocalRunOptions } from './engines/local.js';
export type { RunnerNeedsErrorCode } from './engines/errors.js';
export type {
  CapEnforcement,
  Enforcement,
  RunOutcome,
  RunnerRequest,
  SandboxBox,
  SandboxCreateRequest,
  SandboxDriver,
  SandboxExecRequest,
  SandboxExecResult,
} from './engines/types.js';
