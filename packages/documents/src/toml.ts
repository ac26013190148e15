import { TomlError, parse } from 'smol-toml';
import { DocumentSyntaxError, DocumentTooDeepError } from './errors.js';
import { DOCUMENT_LIMITS, type DocumentLimits } from './limits.js';
import { toCheckedPlain } from './plain.js';
import { offsetOf, positionAt } from './position.js';
import { boundedText } from './text.js';

export interface TomlParseOptions {
  source: string;
  limits?: Partial<DocumentLimits>;
}

/**
 * Untrusted TOML to plain data: bounded (DocumentTooLargeError); inline arrays and tables
 * nested past `maxDepth` stop smol-toml itself (DocumentTooDeepError); tables nested by
 * dotted keys (`a.a.a…`, which smol-toml does not bound) and the value count are checked on
 * the result. Dates stay smol-toml's date objects. Of the parser's message only its first
 * line (`unfinished string`, fixed text) is passed on, as `description`: the rest quotes the
 * lines around the error.
 */
export function parseUntrustedToml(input: string | Uint8Array, options: TomlParseOptions): unknown {
  const limits = { ...DOCUMENT_LIMITS, ...options.limits };
  const text = boundedText(input, options.source, 'toml', limits.maxBytes);
  let value: unknown;
  try {
    value = parse(text, { maxDepth: limits.maxDepth });
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    // smol-toml counts columns in UTF-16 units: back to an offset, then counted as characters.
    const offset = offsetOf(text, error.line, error.column);
    const at = offset === undefined ? undefined : positionAt(text, offset);
    if (/excessively nested/.test(error.message))
      throw new DocumentTooDeepError(options.source, 'toml', limits.maxDepth, at?.line, at?.column);
    throw new DocumentSyntaxError(options.source, 'toml', 'INVALID_TOML', at?.line, at?.column, {
      cause: new Error('the TOML parser refused the document'),
      ...(at === undefined ? {} : { excerpt: at.excerpt }),
      ...tomlDescription(error.message),
    });
  }
  return toCheckedPlain(value, options.source, 'toml', limits);
}

/** smol-toml's reason, `Invalid TOML document: <reason>\n\n<the lines around the error>`: fixed texts. */
function tomlDescription(message: string): { description?: string } {
  const reason = /^Invalid TOML document: ([a-z][a-z ,:'.-]*)$/m.exec(message)?.[1]?.replace(/\.$/, '');
  return reason === undefined ? {} : { description: reason };
}
