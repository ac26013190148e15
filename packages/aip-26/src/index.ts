// AIP-26 `code` and `run` blocks for a host: check a manifest, build its bundle, start it.
// Every name here is a promise to hosts; the parts these stand on stay inside the package.

// Build a bundle from a manifest's code block
export { defineCode, defineCodeWithReport, scanCode } from './code/define-code.js';
export { defineCodeToFile } from './code/to-file.js';
export { planCode } from './code/plan.js';
export { assertRunnerFitsRun, inheritBlocks } from './code/inherit.js';

// Where sources come from: a workspace folder on disk, GitHub
export { nodeWorkspaceFs } from './workspace/node-workspace-fs.js';
export { githubConnector } from './github/connector.js';

// Check a manifest's blocks against the AIP-26 schema
export {
  addCodeSchemas,
  checkCode,
  checkCodeWorkspaceManifest,
  checkRun,
  createCodeValidator,
} from './schema/validator.js';

// Read a run block and start a bundle
export { parseRun } from './run/parse.js';
export { resolveRun } from './run/resolve.js';
export { assertRunFileInBundle } from './run/in-bundle.js';
export { DEFAULT_RUNNERS } from './run/runners.js';
export { splitWords } from './run/shell.js';
export { subprocessRunner } from './runner/subprocess-runner.js';

// Write deterministic bundle archives, and read archives from outside safely
export { bundleStream, writeBundle } from './tar/write-bundle.js';
export { extractTarGz } from './tar/extract.js';
export { readBundleEntries, readTarGz } from './tar/read-tar-gz.js';

// Errors a host can catch (each with a stable `code`)
export { ManifestValidationError } from './schema/errors.js';
export { BundleSizeError, BundleWriteError, SourceResolutionError } from './code/errors.js';
export { RunnerConflictError } from './code/inherit.js';
export { PathError } from './paths/errors.js';
export { WorkspaceChangedError, WorkspaceLinkError, WorkspaceManifestError } from './workspace/node-workspace-fs.js';
export { GithubRefNotFoundError, PinRequiredError } from './github/connector.js';
export { RunFileMissingError, RunResolutionError } from './run/errors.js';
export { BundleEntryError, ExtractIOError } from './tar/errors.js';

// Types a host passes or receives
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
export type { BundleReport, CodeReport, DefineCodeOptions, SourceReport } from './code/define-code.js';
export type { CodePlan, PlannedSource, ReferencedWorkspace } from './code/plan.js';
export type { InheritedBlocks, InheritingWorkspace } from './code/inherit.js';
export type { GithubConnectorOptions, ResolvedGithubRef } from './github/connector.js';
export type { CheckOptions } from './schema/validator.js';
export type { CheckResult, SchemaProblem } from './schema/errors.js';
export type { ParsedRun, RunOptions, RunValue } from './run/parse.js';
export type { ResolvedRun } from './run/resolve.js';
export type { RunnerTable } from './run/runners.js';
export type { Words } from './run/shell.js';
export type { Runner, RunRequest, RunResult, SubprocessRunnerOptions } from './runner/subprocess-runner.js';
export type { BundleEntries, WriteBundleOptions } from './tar/write-bundle.js';
export type { BundleEntry, InMemoryEntry } from './tar/bundle-plan.js';
export type { ExtractOptions, ExtractResult } from './tar/extract.js';

// Types of the errors' fields
export type { SourceProblem } from './code/errors.js';
export type { PathKind, PathRefusal } from './paths/errors.js';
export type { RunProblem } from './run/errors.js';
export type { BundleEntryProblem } from './tar/errors.js';
