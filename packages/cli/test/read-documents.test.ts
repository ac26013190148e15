import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DocumentSyntaxError } from '@agentproto/documents';
import { tempDirs } from '@agentproto/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { readCodeMdFrontmatter } from '../src/read-code-md.js';
import { readYamlFile } from '../src/read-yaml.js';

const dirs = tempDirs('cli-read-');
afterEach(() => dirs.removeAll());

/** The rejection, and the DocumentSyntaxError it was caused by. */
async function failure(read: Promise<unknown>): Promise<{ message: string; cause: DocumentSyntaxError }> {
  const error = await read.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Error);
  const { message, cause } = error as Error;
  expect(cause).toBeInstanceOf(DocumentSyntaxError);
  return { message, cause: cause as DocumentSyntaxError };
}

describe('a file named on the command line that does not parse: the error names the file, line and column', () => {
  it('a YAML declaration', async () => {
    const file = join(await dirs.make(), 'skills.yaml');
    await writeFile(file, 'skills:\n  - source: https://example.com/a.git\n    ref: "v1\n');
    const { message, cause } = await failure(readYamlFile(file, 'declaration'));
    // The parser notices the missing quote at the end of the text: the end of the last line.
    expect(message).toBe(
      `declaration ${file} is not valid YAML at line 3, column 13 (MISSING_CHAR): missing closing "quote`,
    );
    expect(message).not.toContain('\n');
    expect(cause.source).toBe(file);
    expect(cause.excerpt).toBe('  3 |     ref: "v1\n    |             ^');
  });

  it('the front matter of a CODE.md: lines of the whole file, the opening --- being line 1', async () => {
    const file = join(await dirs.make(), 'CODE.md');
    await writeFile(file, '---\nname: acme\nversion: 1\nname: again\n---\n# Body\n');
    const { message, cause } = await failure(readCodeMdFrontmatter(file));
    expect(message).toBe(
      `manifest ${file} front matter is not valid YAML at line 4, column 1 (DUPLICATE_KEY): map keys must be unique`,
    );
    expect(cause).toMatchObject({ source: file, line: 4, column: 1 });
    expect(cause.excerpt).toBe('  4 | name: again\n    | ^');
  });
});
