// A product embedding Agent Plugins validation: an HTTP endpoint that takes a packaged
// plugin (.tar.gz), extracts it safely into a temporary folder and answers with the findings.
export { startValidationServer } from './server.js';
export type { ValidationServer, ValidationServerOptions } from './server.js';
export { validatePluginArchive } from './validate-archive.js';
export type { ArchiveLimits, PluginArchiveReport } from './validate-archive.js';
export { BodyAbortedError, BodyTooLargeError } from './errors.js';
