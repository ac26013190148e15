import { DOCUMENT_LIMITS, DocumentError, parseUntrustedYaml, readBoundedFile } from '@agentproto/documents';
import { CommandError } from './command-error.js';
import { shellQuote } from './format.js';

/**
 * A YAML (or JSON: YAML 1.2 reads it) file named on the command line: a declaration or a
 * manifest that may well come from someone else's repository. Read and parsed under the
 * shared rules for untrusted documents (at most 128 KiB, 64 levels, 100,000 values, 100
 * alias uses), so a hostile file is a CommandError naming the rule, never a dead process.
 */
export async function readYamlFile(path: string, what: string): Promise<unknown> {
  let bytes: Uint8Array;
  try {
    bytes = await readBoundedFile(path, DOCUMENT_LIMITS.maxBytes, 'yaml');
  } catch (error) {
    if (error instanceof DocumentError)
      throw new CommandError(`${what} ${shellQuote(path)} is over the ${DOCUMENT_LIMITS.maxBytes}-byte limit`, {
        cause: error,
      });
    throw new CommandError(
      `cannot read ${what} ${shellQuote(path)}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
  try {
    return parseUntrustedYaml(bytes, { source: path });
  } catch (error) {
    if (!(error instanceof DocumentError)) throw error;
    // The message names the rule, a line and a column, never the file's text (the cause, a
    // DocumentSyntaxError, holds the offending line as its excerpt).
    throw new CommandError(`${what} ${shellQuote(path)} ${error.detail}`, { cause: error });
  }
}
