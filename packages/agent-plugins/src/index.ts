export { type Finding, type FindingCode, type FindingCodeInfo, FINDING_CODES, type Rule, RULES, RULE_TEXT, type Severity, explain, sortFindings } from './findings.js';
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
