import { type Document, Lexer, type LineCounter, parseDocument } from 'yaml';
import { DocumentSyntaxError, DocumentTooComplexError, DocumentTooDeepError } from './errors.js';
import { DOCUMENT_LIMITS, type DocumentLimits } from './limits.js';
import { toCheckedPlain } from './plain.js';
import { positionAt } from './position.js';
import { boundedText } from './text.js';

export interface YamlParseOptions {
  /** Names the document in errors: a path, `skills/x/SKILL.md#/frontmatter`. */
  source: string;
  limits?: Partial<DocumentLimits>;
  /** Filled with line starts, for the caller's own positions. */
  lineCounter?: LineCounter;
  /**
   * The line of its file the text's first line is, so errors give the file's line numbers
   * (default 1). Front matter cut out by findFrontmatter starts on line 2, after the `---`.
   */
  firstLine?: number;
}

/**
 * The one configuration every untrusted YAML document is parsed with. YAML 1.2 core schema:
 * the types every reader agrees on (no dates, `yes` stays a string). Explicit tags are not
 * resolved (`!!binary`, `!!set` and custom tags only warn), so no reader-specific type gets
 * in. `stringKeys` refuses a list or map as a key while composing: a key the library would
 * otherwise stringify, which is exponential in the nesting of keys inside keys (a few hundred
 * `{` took minutes). `prettyErrors` off: messages never quote the source. `logLevel` 'error':
 * warnings are returned, never printed ('silent' would also drop the error for a second
 * document).
 */
const YAML_OPTIONS = Object.freeze({
  version: '1.2',
  schema: 'core',
  strict: true,
  uniqueKeys: true,
  stringKeys: true,
  resolveKnownTags: false,
  prettyErrors: false,
  keepSourceTokens: false,
  logLevel: 'error',
} as const);

/**
 * Parses untrusted YAML into a `yaml` Document whose errors and warnings the caller reports
 * in its own terms. Before the parser runs, the text is bounded (DocumentTooLargeError) and
 * its nesting measured on the lexer's tokens (DocumentTooDeepError): the parser's concrete
 * syntax tree costs ~1 KiB per `[`, so 400,000 of them (a 589-byte gzip) exhausted the heap
 * and aborted the process before any error could be thrown.
 */
export function parseYamlDocument(input: string | Uint8Array, options: YamlParseOptions): Document.Parsed {
  const limits = { ...DOCUMENT_LIMITS, ...options.limits };
  return parseBoundedYaml(boundedText(input, options.source, 'yaml', limits.maxBytes), options, limits.maxDepth);
}

function parseBoundedYaml(text: string, options: YamlParseOptions, maxDepth: number): Document.Parsed {
  checkYamlDepth(text, options.source, maxDepth, options.firstLine);
  return parseDocument(text, { ...YAML_OPTIONS, ...(options.lineCounter ? { lineCounter: options.lineCounter } : {}) });
}

/**
 * A parsed Document's value as plain data: maps as plain objects (a `__proto__` key stays
 * data), alias uses bounded by `maxAliases`, the result bounded by `maxNodes` and `maxDepth`.
 */
export function yamlDocumentValue(doc: Document.Parsed, source: string, limits: Partial<DocumentLimits> = {}): unknown {
  const all = { ...DOCUMENT_LIMITS, ...limits };
  let js: unknown;
  try {
    js = doc.toJS({ mapAsMap: true, maxAliasCount: all.maxAliases });
  } catch (error) {
    // The library's one exhaustion check: too many alias uses ("billion laughs").
    if (error instanceof ReferenceError && /alias/i.test(error.message))
      throw new DocumentTooComplexError(source, 'yaml', 'aliases', all.maxAliases);
    throw error;
  }
  return toCheckedPlain(js, source, 'yaml', all);
}

/**
 * Untrusted YAML to plain data. Every error and warning of the parser (a tag it does not
 * resolve included) is a DocumentSyntaxError naming the first one's code and position.
 */
export function parseUntrustedYaml(input: string | Uint8Array, options: YamlParseOptions): unknown {
  const limits = { ...DOCUMENT_LIMITS, ...options.limits };
  const text = boundedText(input, options.source, 'yaml', limits.maxBytes);
  const doc = parseBoundedYaml(text, options, limits.maxDepth);
  const first = doc.errors[0] ?? doc.warnings[0];
  if (first !== undefined) {
    const at = positionAt(text, first.pos[0], options.firstLine);
    throw new DocumentSyntaxError(options.source, 'yaml', first.code, at.line, at.column, {
      excerpt: at.excerpt,
      description: yamlDescription(first.code, first.message),
    });
  }
  return yamlDocumentValue(doc, options.source, options.limits);
}

/**
 * Refuses YAML nested deeper than `maxDepth`, measured on the lexer's tokens (the lexer is
 * iterative and allocates one string per token). Flow collections count exactly; block
 * collections are counted by the columns of their indicators (`-`, `?`, and a key's `:`),
 * an estimate that can only miss levels that share a column, which the exact check on the
 * parsed value (toCheckedPlain) still catches.
 */
function checkYamlDepth(text: string, source: string, maxDepth: number, firstLine: number | undefined): void {
  let flow = 0;
  const block: number[] = [];
  let offset = 0;
  let column = 0;
  let lineStart = true;
  // The column of the first token after the last block indicator on this line (-1: none yet):
  // where the mapping a `:` closes a key of begins.
  let keyColumn = -1;
  const refuse = () => {
    const at = positionAt(text, offset, firstLine);
    throw new DocumentTooDeepError(source, 'yaml', maxDepth, at.line, at.column);
  };
  for (const token of new Lexer().lex(text)) {
    // Zero-width markers the lexer adds: document mode, scalar follows, flow error end.
    if (token === '\x02' || token === '\x1f' || token === '\x18') continue;
    const here = column;
    offset += token.length;
    const newline = token.lastIndexOf('\n');
    if (token === '' || token === '\n' || token === '\r\n') {
      column = 0;
      lineStart = true;
      continue;
    }
    column = newline === -1 ? column + token.length : token.length - newline - 1;
    const first = token[0];
    if (first === ' ' || first === '\t' || first === '#') continue;
    if (token === '---' || token === '...') {
      flow = 0;
      block.length = 0;
      continue;
    }
    if (flow === 0 && lineStart) {
      while (block.length > 0 && block[block.length - 1]! >= here) block.pop();
      keyColumn = -1;
    }
    lineStart = newline !== -1 && newline === token.length - 1;
    if (token === '[' || token === '{') {
      flow += 1;
      if (flow + block.length > maxDepth) refuse();
    } else if (token === ']' || token === '}') {
      flow = Math.max(0, flow - 1);
    } else if (flow === 0 && (token === '-' || token === '?' || token === ':')) {
      const opens = token === ':' && keyColumn !== -1 ? keyColumn : here;
      while (block.length > 0 && block[block.length - 1]! >= opens) block.pop();
      block.push(opens);
      if (block.length > maxDepth) refuse();
      keyColumn = -1;
    } else if (flow === 0 && keyColumn === -1) {
      keyColumn = here;
    }
  }
}

/**
 * The `yaml` library's messages that are fixed text: passed on. Its other messages quote the
 * document (a tag, a token, an escape), so those errors are described by their code.
 */
const FIXED_MESSAGES = new Set([
  'A block sequence may not be used as an implicit map key',
  'Nested mappings are not allowed in compact mappings',
  'Map keys must be unique',
  "Missing closing 'quote",
  'Missing closing "quote',
  'Comments must be separated from other tokens by white space characters',
  'Implicit map keys need to be followed by map values',
  'Sequence item without - indicator',
  'Tags and anchors must be separated from the next token by white space',
  'Implicit keys need to be on a single line',
  'Implicit keys of flow sequence pairs need to be on a single line',
  'A node can have at most one anchor',
  'A node can have at most one tag',
  'Tabs are not allowed as indentation',
  'All sequence items must start at the same column',
  'An alias node must not specify any properties',
]);

const CODE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  ALIAS_PROPS: 'an alias has an anchor or a tag',
  BAD_ALIAS: 'an alias or anchor is empty or ends in ":"',
  BAD_DIRECTIVE: 'a directive (a line starting with "%") is not valid',
  BAD_DQ_ESCAPE: 'a double-quoted string has an invalid escape sequence',
  BAD_INDENT: 'the indentation does not match the lines around it',
  BAD_PROP_ORDER: 'an anchor or tag stands before an indicator',
  BAD_SCALAR_START: 'a plain value starts with a reserved character (quote the value)',
  BLOCK_AS_IMPLICIT_KEY: 'a block collection is used as a key',
  BLOCK_IN_FLOW: 'a block collection is inside a flow collection ([ ] or { })',
  DUPLICATE_KEY: 'a key is repeated (keys compare as strings)',
  MISSING_CHAR: 'a character is missing (a closing quote, a space, a ":" or ",")',
  MULTILINE_IMPLICIT_KEY: 'a key spans more than one line',
  MULTIPLE_ANCHORS: 'a value has more than one anchor',
  MULTIPLE_DOCS: 'the file holds more than one document (a second "---")',
  MULTIPLE_TAGS: 'a value has more than one tag',
  NON_STRING_KEY: 'a list or map is used as a key',
  TAB_AS_INDENT: 'a tab is used for indentation',
  TAG_RESOLVE_FAILED: 'an explicit tag (!tag) is used; tags are not resolved',
  UNEXPECTED_TOKEN: 'unexpected character or token here',
  BAD_COLLECTION_TYPE: 'a tag does not fit the kind of collection',
};

function yamlDescription(code: string, message: string): string | undefined {
  if (FIXED_MESSAGES.has(message)) return message.charAt(0).toLowerCase() + message.slice(1);
  return CODE_DESCRIPTIONS[code];
}
