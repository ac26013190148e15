// An example host for AIP-26 tools: register a manifest (refused with every problem, per
// source, before anything runs), record the commit of every github source, run the bundle.
export { openToolHost, ToolHost } from './tool-host.js';
export type { RegisterOptions, RunToolOptions, ToolHostOptions, ToolRun } from './tool-host.js';
export { checkToolManifest } from './manifest.js';
export type { ManifestCheck, ToolManifest } from './manifest.js';
export { ToolRegistry } from './registry.js';
export type { RegisteredSource, RegisteredTool } from './registry.js';
export { RegistryCorruptError, ToolNotRegisteredError, ToolRefusedError, ToolSourceMovedError } from './errors.js';
export type { RegistrationProblem } from './errors.js';
