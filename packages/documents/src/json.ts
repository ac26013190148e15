import { DocumentSyntaxError, DocumentTooComplexError, DocumentTooDeepError } from './errors.js';
import { DOCUMENT_LIMITS, type DocumentLimits } from './limits.js';
import { boundedText, lineColumn } from './text.js';

export interface JsonParseOptions {
  source: string;
  limits?: Partial<DocumentLimits>;
}

/**
 * Untrusted JSON to plain data: bounded (DocumentTooLargeError), its nesting and value count
 * measured in one pass before JSON.parse (DocumentTooDeepError, DocumentTooComplexError), so
 * neither the parse nor any recursive walk after it (schema checks, copies) meets a depth the
 * stack cannot hold. JSON.parse makes `__proto__` an own key, never the prototype. A byte
 * order mark is a syntax error, as JSON forbids it; a caller that accepts one strips it first.
 * The parser's message is not passed on: V8 quotes the text around the error.
 */
export function parseUntrustedJson(input: string | Uint8Array, options: JsonParseOptions): unknown {
  const limits = { ...DOCUMENT_LIMITS, ...options.limits };
  const text = boundedText(input, options.source, 'json', limits.maxBytes);
  checkJsonShape(text, options.source, limits);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const position = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
    const at = position === undefined ? undefined : lineColumn(text, Number(position));
    throw new DocumentSyntaxError(options.source, 'json', 'INVALID_JSON', at?.line, at?.column);
  }
}

/** One pass over the text outside strings: depth of `[`/`{`, and values counted by their containers and commas. */
function checkJsonShape(text: string, source: string, limits: DocumentLimits): void {
  let depth = 0;
  let nodes = 1;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i += 1; // backslash: the next unit is escaped
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      nodes += 1;
      if (depth > limits.maxDepth) {
        const at = lineColumn(text, i);
        throw new DocumentTooDeepError(source, 'json', limits.maxDepth, at.line, at.column);
      }
    } else if (c === 0x5d || c === 0x7d) depth = Math.max(0, depth - 1);
    else if (c === 0x2c) nodes += 1;
    if (nodes > limits.maxNodes) throw new DocumentTooComplexError(source, 'json', 'nodes', limits.maxNodes);
  }
}
