/**
 * Why an untrusted document (YAML, JSON, TOML) was not parsed. One class per failure kind,
 * each with a stable `code` and the facts in fields. Messages name the document's source
 * and a line and column at most: never a byte of its text, which may hold a secret (a
 * syntax error's `excerpt`, a separate field, shows the offending line).
 */
export type DocumentFormat = 'yaml' | 'json' | 'toml';

export type DocumentErrorCode = 'DOCUMENT_TOO_LARGE' | 'DOCUMENT_TOO_DEEP' | 'DOCUMENT_TOO_COMPLEX' | 'DOCUMENT_SYNTAX';

export abstract class DocumentError extends Error {
  abstract readonly code: DocumentErrorCode;
  /** The message without the source: for a caller that names the document its own way. */
  readonly detail: string;
  constructor(
    /** What the document is, as the caller named it: a file path, `SKILL.md#/frontmatter`. */
    readonly source: string,
    readonly format: DocumentFormat,
    detail: string,
    options?: { cause?: unknown },
  ) {
    // A path may hold a line break or an escape sequence: the message stays one printable line.
    super(`${oneLine(source)}: ${detail}`, options);
    this.name = new.target.name;
    this.detail = detail;
  }
}

/** More bytes than the limit: refused before any parser saw it. */
export class DocumentTooLargeError extends DocumentError {
  readonly code = 'DOCUMENT_TOO_LARGE';
  constructor(
    source: string,
    format: DocumentFormat,
    readonly limit: number,
    /** The size in bytes, or undefined when reading stopped at the limit. */
    readonly size: number | undefined,
  ) {
    super(
      source,
      format,
      `is ${size === undefined ? 'over' : `${size} bytes, over`} the ${limit}-byte limit for a ${format.toUpperCase()} document`,
    );
  }
}

/** Collections nested deeper than the limit: refused before the parser built them. */
export class DocumentTooDeepError extends DocumentError {
  readonly code = 'DOCUMENT_TOO_DEEP';
  constructor(
    source: string,
    format: DocumentFormat,
    readonly limit: number,
    readonly line: number | undefined,
    readonly column: number | undefined,
  ) {
    super(source, format, `nests collections more than ${limit} deep${where(line, column)}`);
  }
}

/** More values than the limit once aliases are expanded, or more alias uses than allowed. */
export class DocumentTooComplexError extends DocumentError {
  readonly code = 'DOCUMENT_TOO_COMPLEX';
  constructor(
    source: string,
    format: DocumentFormat,
    readonly measure: 'nodes' | 'aliases',
    readonly limit: number,
  ) {
    super(
      source,
      format,
      measure === 'nodes'
        ? `holds more than ${limit} values (aliases expanded)`
        : `expands aliases more than ${limit} times`,
    );
  }
}

/**
 * The document is not valid: `reason` is the parser's own code (`BLOCK_AS_IMPLICIT_KEY`,
 * `DUPLICATE_KEY`, `NOT_UTF8`, `INVALID_JSON`, `INVALID_TOML`, ...), `description` says it in
 * words (`unfinished string`, `expected ',' or '}' after a value in an object`). `line` and
 * `column` count from 1 as an editor does (columns in characters, lines of the whole file,
 * front matter included); `excerpt` is the offending line and a caret under the column:
 *
 * ```text
 *   3 | name = "acme
 *     |        ^
 * ```
 *
 * The message (one line) holds the source, the reason and the position, never the text.
 * The excerpt shows that one line of the document (cut to 120 characters around the column,
 * control characters escaped), which may hold a secret: it is there for a caller that asks
 * for it (a command line showing a user their own file), and not enumerable, so logging the
 * error (`console.error(error)`, `util.inspect`, `JSON.stringify`) never prints it.
 */
export class DocumentSyntaxError extends DocumentError {
  readonly code = 'DOCUMENT_SYNTAX';
  /** The offending line and a caret line (two lines, `\n` between), or undefined without a position. Not enumerable. */
  declare readonly excerpt: string | undefined;
  /** The reason in words, when the parser gives one. */
  readonly description: string | undefined;
  constructor(
    source: string,
    format: DocumentFormat,
    readonly reason: string,
    readonly line: number | undefined,
    readonly column: number | undefined,
    options?: { cause?: unknown; excerpt?: string; description?: string },
  ) {
    const at = line === undefined ? '' : ` at line ${line}${column === undefined ? '' : `, column ${column}`}`;
    const what = options?.description === undefined ? '' : `: ${options.description}`;
    super(
      source,
      format,
      `is not valid ${format.toUpperCase()}${at} (${reason})${what}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    Object.defineProperty(this, 'excerpt', { value: options?.excerpt, enumerable: false });
    this.description = options?.description;
  }
}

function where(line: number | undefined, column: number | undefined): string {
  return line === undefined ? '' : ` (line ${line}${column === undefined ? '' : `, column ${column}`})`;
}

function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}
