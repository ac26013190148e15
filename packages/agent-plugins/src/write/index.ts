export { PluginGitPathError, PluginWriteError, type WritePluginOptions, writePlugin } from './write.js';
export { type PluginVerification, readPackageFiles, verifyPlugin } from './verify.js';
export { type EmitOptions, type EmitResult, PluginRejectedError, emitPlugin } from './emit.js';
