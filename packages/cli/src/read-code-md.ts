import { open } from 'node:fs/promises';
import { DocumentError, FRONTMATTER_LIMITS, findFrontmatter, parseUntrustedYaml } from '@agentproto/documents';
import { CommandError } from './command-error.js';
import { shellQuote } from './format.js';

/**
 * The YAML front matter of a lean CODE.md named on the command line (AIP-26 "CODE.md — lean
 * composable form"). Like every document from someone else: only the head that can hold the
 * front matter is read (at most FRONTMATTER_LIMITS.maxBytes UTF-16 units, which UTF-8
 * spells in at most three bytes each; the body is never read), and it is parsed under the
 * shared rules for untrusted documents, so a hostile file is a CommandError naming the rule.
 */
export async function readCodeMdFrontmatter(path: string): Promise<unknown> {
  let text: string;
  let whole: boolean;
  try {
    const file = await open(path, 'r');
    try {
      const { size } = await file.stat();
      const head = Buffer.alloc(Math.min(size, 3 * FRONTMATTER_LIMITS.maxBytes + 16));
      const { bytesRead } = await file.read(head, 0, head.length, 0);
      text = head.subarray(0, bytesRead).toString('utf8');
      whole = bytesRead >= size;
    } finally {
      await file.close();
    }
  } catch (error) {
    throw new CommandError(
      `cannot read manifest ${shellQuote(path)}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
  const block = findFrontmatter(text, FRONTMATTER_LIMITS.maxBytes);
  if (block.found === 'too-large' || (block.found !== 'block' && !whole)) {
    throw new CommandError(
      `manifest ${shellQuote(path)}: its front matter is over the ${FRONTMATTER_LIMITS.maxBytes}-character limit`,
    );
  }
  if (block.found !== 'block')
    throw new CommandError(
      `manifest ${shellQuote(path)} has no YAML front matter (a first line "---" and a closing "---")`,
    );
  try {
    // firstLine 2: the opening `---` is line 1, so errors give the line of the file an editor shows.
    return parseUntrustedYaml(block.yaml, { source: path, limits: FRONTMATTER_LIMITS, firstLine: 2 });
  } catch (error) {
    if (!(error instanceof DocumentError)) throw error;
    // The message names the rule, a line and a column of the file, never its text (the
    // cause, a DocumentSyntaxError, holds the offending line as its excerpt).
    throw new CommandError(`manifest ${shellQuote(path)} front matter ${error.detail}`, { cause: error });
  }
}
