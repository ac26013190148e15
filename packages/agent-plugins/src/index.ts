// Agent Plugins packages for a host: load a configuration, build, write, validate, verify,
// import, emit, push and pull a package. Every name here is a promise to hosts; the parts
// these stand on (layouts, provenance, byte order, finding tables per module) stay inside.

// Load a plugin configuration (TOML, YAML or JSON)
export {
  loadPluginConfig,
  normalizePluginConfig,
  PLUGIN_CONFIG_SCHEMA,
  PLUGIN_CONFIG_SCHEMA_ID,
} from './config/index.js';

// Build a package from a configuration, write it, check it against its configuration, emit it
export { buildPlugin } from './build/build.js';
export { omittedOf } from './build/sidecar.js';
export { SIDECAR } from './bundle/include.js';
export { emitPlugin, readPackageFiles, verifyPlugin, writePlugin } from './write/index.js';

// Read a package folder (or a package held in memory) as a conformant client loads it
export { validatePlugin } from './validate/index.js';
export { importPlugin } from './import/index.js';

// Read an upload into a package tree: picked files, a .zip, a .tar.gz (each bounded)
export { readUploadedFiles } from './upload/files.js';
export { readZip } from './upload/zip.js';
export { readTarGz } from './upload/tar-gz.js';
export { DEFAULT_UPLOAD_LIMITS } from './upload/tree-builder.js';

// Check one part alone: plugin.json, mcp.json, a skill, MCP servers
export { checkMcpManifestVersion, checkPluginManifest, pluginNameProblem } from './manifest.js';
export { checkSkill } from './skills/check.js';
export { buildServers } from './mcp/build.js';
export { readServers } from './mcp/read.js';

// Likely secrets in a host's own configuration values
export { detectSecret } from './secrets/detect.js';
export { SECRET_RULES } from './secrets/rules.js';

// Push and pull a package as an OCI artifact
export { pullPlugin, pushPlugin } from './oci/index.js';
export { DEFAULT_PULL_LIMITS } from './oci/limits.js';

// Spec versions, their pinned schemas, and what each finding code means
export { DEFAULT_SPEC_VERSION, PINNED_SCHEMAS, SPEC_VERSIONS } from './schemas.js';
export { FINDING_CODES, RULE_TEXT, RULES, explain, sortFindings } from './findings.js';

// Errors a host can catch (each with a stable `code`)
export { PluginConfigError, PluginContentRootError } from './config/index.js';
export { PluginGitPathError, PluginRejectedError, PluginWriteError } from './write/index.js';
export {
  PluginArtifactError,
  PluginDestinationError,
  PluginEntryUnsupportedError,
  PluginLayerUnsafeError,
  PluginNotFoundError,
  PluginOciError,
  PluginPackageInvalidError,
  PluginTooLargeError,
} from './oci/errors.js';

// Types a host passes or receives
export type {
  AuthorConfig,
  LoadedPluginConfig,
  LoadPluginConfigOptions,
  McpServerConfig,
  PluginConfig,
} from './config/index.js';
export type { BuildOptions, PluginPackage } from './build/build.js';
export type { Drift, OmittedEntry } from './build/sidecar.js';
export type { PackageFile } from './bundle/include.js';
export type { EmitOptions, EmitResult, PluginVerification, WritePluginOptions } from './write/index.js';
export type { PackageSource, PackageUpload, PluginValidation } from './validate/core.js';
export type { PackageTree, PackageTreeEntry } from './read/tree.js';
export type { PackageReadLimits } from './read/reader.js';
export type { UploadedFile } from './upload/files.js';
export type { UploadLimits } from './upload/tree-builder.js';
export type { ImportedPlugin, ImportReportEntry } from './import/index.js';
export type { McpVersionCheck, PluginManifestCheck } from './manifest.js';
export type { SkillCheck } from './skills/check.js';
export type { BuildServersOptions, McpServers } from './mcp/build.js';
export type { McpRemoteServer, McpServer, McpServerType, McpStdioServer } from './mcp/check.js';
export type { McpServersRead } from './mcp/read.js';
export type { SecretContext, SecretField, SecretMatch } from './secrets/detect.js';
export type { SecretRule } from './secrets/rules.js';
export type { PackageDirent, PackageFileHandle, PackageFs, PackageStats } from './read/resolve.js';
export type { PluginReaderOptions } from './read/reader.js';
export type { PushedPlugin, PushPluginOptions } from './oci/push.js';
export type { PullLimits } from './oci/limits.js';
export type { PulledPlugin, PullPluginOptions } from './oci/pull.js';
export type { PluginRegistryOptions } from './oci/repository.js';
export type { PluginArtifactConfig } from './oci/artifact.js';
export type { PinnedSchemas, SpecVersion } from './schemas.js';
export type { Finding, FindingCodeInfo, Rule, Severity } from './findings.js';

// Types of the errors' fields
export type { PluginOciErrorCode, PluginSizePart } from './oci/errors.js';
