/**
 * Why an untrusted document (YAML, JSON, TOML) was not parsed. One class per failure kind,
 * each with a stable `code` and the facts in fields. Messages name the document's source
 * and a line and column at most: never a byte of its text, which may hold a secret.
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
    super(`${source}: ${detail}`, options);
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
 * `DUPLICATE_KEY`, `NOT_UTF8`, `INVALID_JSON`, `INVALID_TOML`, ...).
 */
export class DocumentSyntaxError extends DocumentError {
  readonly code = 'DOCUMENT_SYNTAX';
  constructor(
    source: string,
    format: DocumentFormat,
    readonly reason: string,
    readonly line: number | undefined,
    readonly column: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(source, format, `is not valid ${format.toUpperCase()}: ${reason}${where(line, column)}`, options);
  }
}

function where(line: number | undefined, column: number | undefined): string {
  return line === undefined ? '' : ` (line ${line}${column === undefined ? '' : `, column ${column}`})`;
}
