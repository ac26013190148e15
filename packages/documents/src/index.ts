// Parsing documents nobody vouches for (front matter, manifests, plugin configs,
// declarations): one implementation, one parser configuration, for every package.
export {
  DocumentError,
  DocumentSyntaxError,
  DocumentTooComplexError,
  DocumentTooDeepError,
  DocumentTooLargeError,
} from './errors.js';
export type { DocumentErrorCode, DocumentFormat } from './errors.js';
export { DOCUMENT_LIMITS, FRONTMATTER_LIMITS } from './limits.js';
export type { DocumentLimits } from './limits.js';
export { parseUntrustedYaml, parseYamlDocument, yamlDocumentValue } from './yaml.js';
export type { YamlParseOptions } from './yaml.js';
export { parseUntrustedJson } from './json.js';
export type { JsonParseOptions } from './json.js';
export { parseUntrustedToml } from './toml.js';
export type { TomlParseOptions } from './toml.js';
export { findFrontmatter } from './frontmatter.js';
export type { FrontmatterBlock } from './frontmatter.js';
export { readBoundedFile } from './read.js';
