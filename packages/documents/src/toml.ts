import { TomlError, parse } from 'smol-toml';
import { DocumentSyntaxError, DocumentTooDeepError } from './errors.js';
import { DOCUMENT_LIMITS, type DocumentLimits } from './limits.js';
import { toCheckedPlain } from './plain.js';
import { boundedText } from './text.js';

export interface TomlParseOptions {
  source: string;
  limits?: Partial<DocumentLimits>;
}

/**
 * Untrusted TOML to plain data: bounded (DocumentTooLargeError); inline arrays and tables
 * nested past `maxDepth` stop smol-toml itself (DocumentTooDeepError); tables nested by
 * dotted keys (`a.a.a…`, which smol-toml does not bound) and the value count are checked on
 * the result. Dates stay smol-toml's date objects. The parser's message is not passed on:
 * it quotes the offending line.
 */
export function parseUntrustedToml(input: string | Uint8Array, options: TomlParseOptions): unknown {
  const limits = { ...DOCUMENT_LIMITS, ...options.limits };
  const text = boundedText(input, options.source, 'toml', limits.maxBytes);
  let value: unknown;
  try {
    value = parse(text, { maxDepth: limits.maxDepth });
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    if (/excessively nested/.test(error.message))
      throw new DocumentTooDeepError(options.source, 'toml', limits.maxDepth, error.line, error.column);
    throw new DocumentSyntaxError(options.source, 'toml', 'INVALID_TOML', error.line, error.column, {
      cause: new Error('the TOML parser refused the document'),
    });
  }
  return toCheckedPlain(value, options.source, 'toml', limits);
}
