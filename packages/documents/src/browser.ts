// Parsing documents nobody vouches for, in a browser, a worker or an edge function: every
// parser of the Node entry with the same limits; only readBoundedFile (a file on a disk) is not here.

// Parse a document within its limits: size, depth and node count checked before and while parsing
export { parseUntrustedYaml, parseYamlDocument, yamlDocumentValue } from './yaml.js';
export type { YamlParseOptions } from './yaml.js';
// yaml's own, for a caller reading a parsed document's nodes and positions: the copy of yaml
// this package parses with, so no second one is loaded beside it
export { isMap, isSeq, LineCounter } from 'yaml';
export { parseUntrustedJson } from './json.js';
export type { JsonParseOptions } from './json.js';
export { parseUntrustedToml } from './toml.js';
export type { TomlParseOptions } from './toml.js';
export { findFrontmatter } from './frontmatter.js';
export type { FrontmatterBlock } from './frontmatter.js';

// The limits every parser applies unless a caller passes its own
export { DOCUMENT_LIMITS, FRONTMATTER_LIMITS } from './limits.js';
export type { DocumentLimits } from './limits.js';

// Errors
export {
  DocumentError,
  DocumentSyntaxError,
  DocumentTooComplexError,
  DocumentTooDeepError,
  DocumentTooLargeError,
} from './errors.js';
export type { DocumentErrorCode, DocumentFormat } from './errors.js';
