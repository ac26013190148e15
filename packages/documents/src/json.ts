import { DocumentSyntaxError, DocumentTooComplexError, DocumentTooDeepError } from './errors.js';
import { DOCUMENT_LIMITS, type DocumentLimits } from './limits.js';
import { positionAt } from './position.js';
import { boundedText } from './text.js';

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
 * The parser's message is not passed on: V8 quotes the text around the error, and gives the
 * position in some messages only, differently across Node versions; where JSON.parse failed,
 * locateJsonError finds the first error itself (the same on every Node version).
 */
export function parseUntrustedJson(input: string | Uint8Array, options: JsonParseOptions): unknown {
  const limits = { ...DOCUMENT_LIMITS, ...options.limits };
  const text = boundedText(input, options.source, 'json', limits.maxBytes);
  checkJsonShape(text, options.source, limits);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const found = locateJsonError(text);
    const position = found?.offset ?? Number(/position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1]);
    const at = Number.isNaN(position) ? undefined : positionAt(text, position);
    throw new DocumentSyntaxError(options.source, 'json', 'INVALID_JSON', at?.line, at?.column, {
      ...(at === undefined ? {} : { excerpt: at.excerpt }),
      ...(found === undefined ? {} : { description: found.description }),
    });
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
        const at = positionAt(text, i);
        throw new DocumentTooDeepError(source, 'json', limits.maxDepth, at.line, at.column);
      }
    } else if (c === 0x5d || c === 0x7d) depth = Math.max(0, depth - 1);
    else if (c === 0x2c) nodes += 1;
    if (nodes > limits.maxNodes) throw new DocumentTooComplexError(source, 'json', 'nodes', limits.maxNodes);
  }
}

/**
 * The first error in text JSON.parse refused: its offset and what is wrong, in words that
 * quote nothing of the text. A recognizer of RFC 8259 JSON (what JSON.parse accepts),
 * iterative, run only after JSON.parse failed and after checkJsonShape bounded the nesting.
 * An error at the end of the text points just past its last non-blank character.
 */
function locateJsonError(text: string): { offset: number; description: string } | undefined {
  const n = text.length;
  let i = 0;
  const open: number[] = []; // 0x5b `[` or 0x7b `{` of each open collection
  let expect: 'value' | 'value-or-end' | 'key' | 'key-or-end' | 'after' = 'value';
  const fail = (description: string) => {
    let at = i;
    if (at >= n) {
      at = n;
      while (at > 0 && isBlank(text.charCodeAt(at - 1))) at -= 1;
    }
    return { offset: at, description };
  };
  for (;;) {
    while (i < n && isBlank(text.charCodeAt(i))) i += 1;
    const c = i < n ? text.charCodeAt(i) : -1;
    const top = open[open.length - 1];
    if (expect === 'after') {
      if (top === undefined) return i < n ? fail('more text after the JSON value') : undefined;
      if (c === 0x2c) {
        i += 1;
        expect = top === 0x5b ? 'value' : 'key';
      } else if (c === top + 2) {
        i += 1;
        open.pop();
      } else if (c === -1)
        return fail(top === 0x5b ? "a list is not closed: ']' is missing" : "an object is not closed: '}' is missing");
      else
        return fail(
          top === 0x5b ? "expected ',' or ']' after a list item" : "expected ',' or '}' after a value in an object",
        );
      continue;
    }
    if (expect === 'key' || expect === 'key-or-end') {
      if (c === 0x7d && expect === 'key-or-end') {
        i += 1;
        open.pop();
        expect = 'after';
        continue;
      }
      if (c === 0x7d) return fail("a comma before '}' (JSON allows no trailing comma)");
      if (c !== 0x22)
        return fail(c === -1 ? "an object is not closed: '}' is missing" : 'expected a property name in double quotes');
      const problem = skipString();
      if (problem !== undefined) return problem;
      while (i < n && isBlank(text.charCodeAt(i))) i += 1;
      if (text.charCodeAt(i) !== 0x3a) return fail("expected ':' after a property name");
      i += 1;
      expect = 'value';
      continue;
    }
    if (c === 0x5d && expect === 'value-or-end') {
      i += 1;
      open.pop();
      expect = 'after';
      continue;
    }
    if (c === 0x5d && top === 0x5b) return fail("a comma before ']' (JSON allows no trailing comma)");
    if (c === 0x7b || c === 0x5b) {
      i += 1;
      open.push(c);
      expect = c === 0x7b ? 'key-or-end' : 'value-or-end';
      continue;
    }
    expect = 'after';
    if (c === 0x22) {
      const problem = skipString();
      if (problem !== undefined) return problem;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const problem = skipNumber();
      if (problem !== undefined) return problem;
    } else if (text.startsWith('true', i)) i += 4;
    else if (text.startsWith('false', i)) i += 5;
    else if (text.startsWith('null', i)) i += 4;
    else if (c === -1) return fail('a value is missing at the end');
    else return fail('expected a value (a string in double quotes, a number, true, false, null, [ or {)');
  }

  function skipString(): { offset: number; description: string } | undefined {
    const start = i;
    for (i += 1; i < n; i += 1) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i += 1;
        return undefined;
      }
      if (c < 0x20) return fail('a control character (a line break, a tab) inside a string: escape it');
      if (c === 0x5c) {
        const e = text.charCodeAt(i + 1);
        if (e === 0x75) {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return fail('a \\u escape needs four hex digits');
          i += 5;
        } else if ('"\\/bfnrt'.includes(text.charAt(i + 1)) && i + 1 < n) i += 1;
        else return fail('an invalid escape sequence in a string');
      }
    }
    i = start;
    return fail('a string is not closed: its closing quote is missing');
  }

  function skipNumber(): { offset: number; description: string } | undefined {
    const match = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
    match.lastIndex = i;
    const found = match.exec(text);
    const end = found === null ? i : i + found[0].length;
    const next = text.charCodeAt(end);
    if (
      found === null ||
      found[0] === '-' ||
      (next >= 0x30 && next <= 0x39) ||
      next === 0x2e ||
      next === 0x65 ||
      next === 0x45
    ) {
      i = found === null ? i : end;
      return fail('a number is not valid JSON (no leading zero, +, or trailing ., and digits after . and e)');
    }
    i = end;
    return undefined;
  }
}

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}
