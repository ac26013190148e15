// AIP-26 `code` and `run` blocks: schema, defineCode, resolveRun, and what they stand on.
export { defineCode, defineCodeWithReport, scanCode } from './code/define-code.js';
export type { BundleReport, CodeReport, DefineCodeOptions, SourceReport } from './code/define-code.js';
export type {
  BundleLimits,
  Code,
  CodeSpec,
  DefineCodeArgs,
  GithubAccess,
  GithubFetchLimits,
  Source,
  WorkspaceEntry,
  WorkspaceFs,
} from './code/types.js';
export { DEFAULT_LIMITS } from './code/types.js';
export { desugarCode, planCode, MAX_REF_DEPTH } from './code/plan.js';
export type { CodePlan, PlannedSource, ReferencedWorkspace } from './code/plan.js';
export { inheritBlocks, assertRunnerFitsRun, languageOfRunFile, RunnerConflictError } from './code/inherit.js';
export type { InheritedBlocks, InheritingWorkspace } from './code/inherit.js';
export { SourceResolutionError, BundleSizeError } from './code/errors.js';
export type { SourceProblem } from './code/errors.js';
export {
  nodeWorkspaceFs,
  WorkspaceChangedError,
  WorkspaceLinkError,
  WorkspaceManifestError,
} from './workspace/node-workspace-fs.js';
export { githubConnector, GithubRefNotFoundError, PinRequiredError } from './github/connector.js';
export type { GithubConnectorOptions, ResolvedGithubRef } from './github/connector.js';
export { subprocessRunner } from './runner/subprocess-runner.js';
export type { Runner, RunRequest, RunResult, SubprocessRunnerOptions } from './runner/subprocess-runner.js';
export * from './schema/index.js';
export * from './paths/index.js';
export * from './run/index.js';
export * from './tar/index.js';
