export {
  type Finding,
  type FindingCode,
  type FindingCodeInfo,
  FINDING_CODES,
  MANIFEST_FINDING_CODES,
  type Rule,
  RULES,
  RULE_TEXT,
  type Severity,
  explain,
  findingFrom,
  sortFindings,
} from './findings.js';
export {
  type McpVersionCheck,
  type PluginManifestCheck,
  checkMcpManifestVersion,
  checkPluginManifest,
  isExtensionNamespace,
  isPluginRelativePath,
  pluginNameProblem,
} from './manifest.js';
export {
  DEFAULT_SPEC_VERSION,
  PINNED_SCHEMAS,
  type PinnedSchemas,
  SPEC_VERSIONS,
  type SpecVersion,
  mcpSchemaId,
  pluginSchemaId,
  specOfMcpSchemaId,
  specOfPluginSchemaId,
} from './schemas.js';
export * from './skills/index.js';
export * from './read/index.js';
export * from './bundle/index.js';
export * from './config/index.js';
export * from './mcp/index.js';
export {
  SECRET_FINDING_CODES,
  SECRET_RULES,
  type SecretContext,
  type SecretField,
  type SecretMatch,
  type SecretRule,
  detectSecret,
} from './secrets/index.js';
export * from './extensions/index.js';
export * from './runtimes/index.js';
export { buildPlugin, type BuildOptions, type PluginPackage } from './build/build.js';
export {
  type Drift,
  type OmittedEntry,
  type Sidecar,
  driftBetween,
  omittedFindings,
  omittedOf,
  parseSidecar,
  renderSidecar,
} from './build/sidecar.js';
export { BUILD_FINDING_CODES } from './build/codes.js';
export * from './write/index.js';
export * from './validate/index.js';
export * from './import/index.js';
export * from './oci/index.js';
