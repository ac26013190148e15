// Agent Plugins validation wherever JavaScript runs: a browser, a worker, an edge function.
// Nothing here imports Node; the `browser` export condition (and `./browser`) lead here. The
// verdicts are validatePlugin's on a folder: the same reader, rules and findings.

// Read an upload into a package tree: picked files, a .zip, a .tar.gz (each bounded)
export { readUploadedFiles } from './upload/files.js';
export { readZip } from './upload/zip.js';
export { readTarGz } from './upload/tar-gz.js';
export { DEFAULT_UPLOAD_LIMITS } from './upload/tree-builder.js';

// Validate a package tree or an upload as a conformant client loads it; show what an import would give
export { validatePackage as validatePlugin } from './validate/core.js';
export { importPackage as importPlugin } from './import/core.js';

// Check one part alone: plugin.json, mcp.json, a skill
export { checkMcpManifestVersion, checkPluginManifest, pluginNameProblem } from './manifest.js';
export { checkSkill } from './skills/check.js';

// Spec versions, their pinned schemas, and what each finding code means
export { DEFAULT_SPEC_VERSION, PINNED_SCHEMAS, SPEC_VERSIONS } from './schemas.js';
export { FINDING_CODES, RULE_TEXT, RULES, explain, sortFindings } from './findings.js';

// Types a host passes or receives
export type { PackageTree, PackageTreeEntry } from './read/tree.js';
export type { PackageReadLimits } from './read/reader.js';
export type { UploadedFile } from './upload/files.js';
export type { UploadLimits } from './upload/tree-builder.js';
export type { PackageSource, PackageUpload, PluginValidation } from './validate/core.js';
export type { ImportedPlugin, ImportReportEntry } from './import/core.js';
export type { AuthorConfig, McpServerConfig, PluginConfig } from './config/types.js';
export type { PackageFile } from './bundle/include.js';
export type { McpVersionCheck, PluginManifestCheck } from './manifest.js';
export type { SkillCheck } from './skills/check.js';
export type { PinnedSchemas, SpecVersion } from './schemas.js';
export type { Finding, FindingCodeInfo, Rule, Severity } from './findings.js';
