export { startGitHttpServer } from './http-server.js';
export type { GitHttpServer, GitHttpServerOptions, GitHttpStats, GitHttpRequestLogEntry } from './http-server.js';
export { basicAuthorizationHeader } from './http-auth.js';
export type { BasicAuth, BasicCredential } from './http-auth.js';
export { startGitSshServer } from './ssh-server.js';
export type { GitSshServer, GitSshServerOptions } from './ssh-server.js';
export { generateSshKey } from './ssh-key.js';
export type { GenerateSshKeyOptions, SshKeyPair } from './ssh-key.js';
export { freePort } from './free-port.js';
export { tempDir, tempDirs } from './temp-dir.js';
export type { TempDir, TempDirs } from './temp-dir.js';
export { isolatedGitEnv } from './git-env.js';
export { run, CommandFailedError } from './run.js';
export type { RunOptions, RunResult } from './run.js';
export { makeRepo, parseLsRemote } from './make-repo.js';
export type { BranchSpec, CommitRef, CommitSpec, MadeRepo, RepoSpec, TagSpec } from './make-repo.js';
export { generateTree, writeTree } from './generate-tree.js';
export type { GenerateTreeOptions } from './generate-tree.js';
export type { FileContent, FileTree } from './file-tree.js';
export { renderings, watchProc } from './canary.js';
export type { ProcWatch } from './canary.js';
export { startLinkSwapper } from './link-swapper.js';
export type { LinkSwapper } from './link-swapper.js';
export { writeOutsideSecret } from './outside-secret.js';
export type { OutsideSecret } from './outside-secret.js';
export { startOciRegistry } from './oci-registry.js';
export type { OciRegistry, OciRegistryOptions } from './oci-registry.js';
export { startRegistryTokenServer, startBasicAuthProxy } from './registry-auth.js';
export type {
  BasicAuthProxy,
  BasicAuthProxyOptions,
  HeaderRecorder,
  ProxyRequestLogEntry,
  RegistryAction,
  RegistryTokenServer,
  RegistryTokenServerOptions,
  RegistryUser,
  TokenRequestLogEntry,
} from './registry-auth.js';
export { runBounded } from './bounded-worker.js';
export { residentPeak, resetResidentPeak } from './resident-peak.js';
export type { BoundedOutcome, RunBoundedOptions } from './bounded-worker.js';
export {
  aliasBomb,
  bulkyDocument,
  hostileBytes,
  hostileDocument,
  hostileSkillMd,
  hostileText,
  REPRODUCTIONS,
} from './hostile-documents.js';
export {
  assertReturnsOrThrowsCoded,
  corruptedBytes,
  malformedDocumentBytes,
  malformedVariant,
  untypedError,
  wrongValue,
} from './malformed-documents.js';
export type { EntryPointUnderTest } from './malformed-documents.js';
export { gnuTarSortNameListing, tarListing } from './tar-listing.js';
export { tarOf } from './tar-of.js';
export type { TarOfEntry } from './tar-of.js';
export type { TarListed } from './tar-listing.js';
export { packageDocs, throwsCodes } from './jsdoc.js';
export type { PackageDocs } from './jsdoc.js';
export { bundleForBrowser } from './browser-bundle.js';
export type { BrowserBundle } from './browser-bundle.js';
