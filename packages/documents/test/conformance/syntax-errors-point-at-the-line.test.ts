import { inspect } from 'node:util';
import fc from 'fast-check';
import { stringify as toToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import {
  DocumentSyntaxError,
  findFrontmatter,
  parseUntrustedJson,
  parseUntrustedToml,
  parseUntrustedYaml,
} from '../../src/index.js';

// Issue 14: "Parse errors name the file, line and column (YAML, TOML, JSON), with the offending
// line and a caret, and never print escaped `\n`."

type Format = 'yaml' | 'json' | 'toml';
const PARSE: Record<Format, (text: string, limits?: { maxBytes: number }) => unknown> = {
  yaml: (text, limits) => parseUntrustedYaml(text, { source: 'conf/plugin.yaml', ...(limits && { limits }) }),
  json: (text, limits) => parseUntrustedJson(text, { source: 'conf/plugin.json', ...(limits && { limits }) }),
  toml: (text, limits) => parseUntrustedToml(text, { source: 'conf/plugin.toml', ...(limits && { limits }) }),
};

function syntaxError(parse: () => unknown): DocumentSyntaxError {
  try {
    parse();
  } catch (error) {
    if (error instanceof DocumentSyntaxError) return error;
    throw error;
  }
  throw new Error('the document parsed');
}

/** The two lines of an excerpt, and where its caret stands in the shown line. */
function caretOf(excerpt: string | undefined): { number: string; shown: string; caret: number } {
  const lines = (excerpt ?? '').split('\n');
  expect(lines).toHaveLength(2);
  const [shownLine = '', caretLine = ''] = lines;
  const bar = shownLine.indexOf(' | ');
  expect(caretLine.indexOf(' | ')).toBe(bar);
  expect(caretLine.slice(bar + 3).replace(/ /g, '')).toBe('^');
  return {
    number: shownLine.slice(0, bar).trim(),
    shown: shownLine.slice(bar + 3),
    caret: caretLine.length - 1 - (bar + 3),
  };
}

describe('a syntax error names the file, line and column, and shows the line with a caret', () => {
  it.each([
    [
      'toml',
      'name = "acme"\nversion = "1.0.0"\ndescription = "tools\n',
      3,
      21,
      '  3 | description = "tools\n    |                     ^',
      'control characters are not allowed in strings',
    ],
    [
      'json',
      '{\n  "name": "acme",\n  "version": 1.0.0\n}\n',
      3,
      17,
      '  3 |   "version": 1.0.0\n    |                 ^',
      'a number is not valid',
    ],
    ['json', '{\n  "name": "acme",\n}', 3, 1, '  3 | }\n    | ^', 'no trailing comma'],
    ['yaml', 'name: acme\nkeywords: [a, b\nversion: 1\n', 3, 1, '  3 | version: 1\n    | ^', 'indentation'],
    ['toml', 'a = 1\nname = "acme', 2, 8, '  2 | name = "acme\n    |        ^', 'unfinished string'],
    ['yaml', 'name: acme\nname: other\n', 2, 1, '  2 | name: other\n    | ^', 'map keys must be unique'],
  ] as const)('%s %j', (format, text, line, column, excerpt, description) => {
    const error = syntaxError(() => PARSE[format](text));
    expect(error).toMatchObject({ code: 'DOCUMENT_SYNTAX', source: `conf/plugin.${format}`, line, column });
    expect(error.message).toContain(
      `conf/plugin.${format}: is not valid ${format.toUpperCase()} at line ${line}, column ${column}`,
    );
    expect(error.message).not.toMatch(/[\n\r]/);
    if (excerpt !== undefined) expect(error.excerpt).toBe(excerpt);
    if (description !== undefined) expect(error.description).toContain(description);
    expect(caretOf(error.excerpt).number).toBe(String(line));
  });

  it('a CRLF file: lines and columns as in the LF file, no \\r in the excerpt', () => {
    for (const format of ['toml', 'json', 'yaml'] as const) {
      const lf = {
        toml: 'a = 1\nb = 2\nname = "acme\n',
        json: '{\n  "a": 1,\n  "b": [1 2]\n}\n',
        yaml: 'a: 1\nb: 2\nc: "x\n',
      }[format];
      const fromLf = syntaxError(() => PARSE[format](lf));
      const fromCrlf = syntaxError(() => PARSE[format](lf.replace(/\n/g, '\r\n')));
      expect([fromCrlf.line, fromCrlf.column, fromCrlf.excerpt], format).toEqual([
        fromLf.line,
        fromLf.column,
        fromLf.excerpt,
      ]);
      expect(fromCrlf.excerpt).not.toContain('\r');
      expect(fromCrlf.excerpt).not.toContain('\\x0d');
    }
    expect(syntaxError(() => PARSE.toml('a = 1\r\nb = 2\r\nname = "acme')).excerpt).toBe(
      '  3 | name = "acme\n    |        ^',
    );
  });

  it('a tab-indented line: tabs expanded to stops of 4, the caret under the character, the column counting the tab as one', () => {
    const error = syntaxError(() => PARSE.toml('[plugin]\n\tname = "acme" x\n'));
    expect([error.line, error.column]).toEqual([2, 16]); // the x, after a tab and `name = "acme" `
    expect(error.excerpt).toBe('  2 |     name = "acme" x\n    |                   ^');
    const inside = syntaxError(() => PARSE.json('{"a":\t"x\ty"}'));
    expect(inside.column).toBe(9); // the tab inside the string, after `{"a":<tab>"x`
    expect(inside.excerpt).toBe('  1 | {"a":   "x  y"}\n    |           ^');
  });

  it('a multi-byte line: the column counts characters as an editor does; wide characters take two cells', () => {
    // é is 2 UTF-8 bytes, 名 3 (and two cells wide), 😀 4 bytes and 2 UTF-16 units.
    const error = syntaxError(() => PARSE.toml('title = "é名😀" x\n'));
    expect([error.line, error.column]).toEqual([1, 15]);
    expect(error.excerpt).toBe('  1 | title = "é名😀" x\n    |                 ^');
    const json = syntaxError(() => PARSE.json('["😀😀", 名]'));
    expect(json.column).toBe(8);
    expect(json.excerpt).toBe('  1 | ["😀😀", 名]\n    |          ^');
    const yaml = syntaxError(() => PARSE.yaml('名前: 1\n名前: 2\n'));
    expect([yaml.line, yaml.column]).toEqual([2, 1]);
  });

  it('an error on the last line without a trailing newline', () => {
    expect(syntaxError(() => PARSE.toml('a = 1\nb = [1, 2')).excerpt).toBe('  2 | b = [1, 2\n    |          ^');
    const json = syntaxError(() => PARSE.json('{"a": [1, 2'));
    expect([json.line, json.column, json.description]).toEqual([1, 12, "a list is not closed: ']' is missing"]);
    expect(json.excerpt).toBe('  1 | {"a": [1, 2\n    |            ^');
    // With a trailing newline the end of the text is the end of the last line, not a line after it.
    expect(syntaxError(() => PARSE.json('{"a": [1, 2\n\n')).excerpt).toBe('  1 | {"a": [1, 2\n    |            ^');
  });

  it('control characters, bidirectional overrides and line separators are escaped, the caret still under the spot', () => {
    const error = syntaxError(() => PARSE.json('{"a\u202e": 1 \u001b[31m}'));
    expect(error.excerpt).toBe('  1 | {"a\\u202e": 1 \\x1b[31m}\n    |               ^'); // at the escape
    expect(error.message).not.toMatch(/[\u0000-\u001f\u202e]/);
    const source = syntaxError(() => parseUntrustedJson('{', { source: 'evil\n\u001b[2Jname.json' }));
    expect(source.message).toMatch(/^evil\\x0a\\x1b\[2Jname\.json: /);
  });

  it('a 10 MB single line: the excerpt is one line cut to about 120 characters around the column', () => {
    const long = 'x'.repeat(10 * 1024 * 1024);
    const limits = { maxBytes: 11 * 1024 * 1024 };
    for (const [format, text] of [
      ['json', `["${long}", ]`],
      ['toml', `k = "${long}" x`],
      ['yaml', `k: ${long} : x`],
    ] as const) {
      const error = syntaxError(() => PARSE[format](text, limits));
      expect(error.excerpt!.length, format).toBeLessThan(300);
      const { shown, caret } = caretOf(error.excerpt);
      expect(shown.length, format).toBeLessThanOrEqual(122);
      expect(caret, format).toBeLessThanOrEqual(shown.length);
      expect(error.message.length, format).toBeLessThan(300);
    }
    const json = syntaxError(() => PARSE.json(`["${long}", ]`, limits));
    expect(json.column).toBe(long.length + 6);
    expect(caretOf(json.excerpt).shown).toMatch(/^…x+", \]$/);
    // In the middle of the line: cut on both sides, 40 characters before the caret and 80 after.
    const half = 'x'.repeat(5 * 1024 * 1024);
    const middle = syntaxError(() => PARSE.json(`["${half}", , "${half}"]`, limits));
    const cut = caretOf(middle.excerpt);
    expect(cut.shown).toMatch(/^…x+", , "x+…$/);
    expect([...cut.shown].length).toBe(122);
    expect(cut.caret).toBe(41);
    expect(cut.shown.charAt(cut.caret)).toBe(',');
  });

  it('front matter: firstLine 2 gives the line of the whole file', () => {
    const file = '---\nname: skill\nname: again\n---\nbody\n';
    const block = findFrontmatter(file, 32 * 1024);
    if (block.found !== 'block') throw new Error('no front matter');
    const error = syntaxError(() => parseUntrustedYaml(block.yaml, { source: 'SKILL.md', firstLine: 2 }));
    expect([error.line, error.column]).toEqual([3, 1]);
    expect(error.excerpt).toBe('  3 | name: again\n    | ^');
  });

  it('the excerpt stays out of logs: not enumerable, so inspect and JSON.stringify never print the line', () => {
    const secret = 'sk-live-9f8e7d6c5b4a';
    const error = syntaxError(() => PARSE.toml(`token = "${secret}" x`));
    expect(error.excerpt).toContain(secret);
    expect(error.message).not.toContain(secret);
    expect(inspect(error)).not.toContain(secret);
    expect(JSON.stringify(error)).not.toContain(secret);
    expect(Object.keys(error)).not.toContain('excerpt');
  });
});

/** Documents as each format writes them, with characters an editor counts differently from bytes. */
const documentOf = (format: Format) =>
  fc
    .dictionary(
      fc.string({ minLength: 1, maxLength: 8, unit: fc.constantFrom('a', 'b', 'é', '名', '_') }),
      fc.jsonValue({ maxDepth: 3, stringUnit: fc.constantFrom('a', ' ', 'é', '名', '😀', '\t', '"', ':', '#') }),
      { minKeys: 1, maxKeys: 6 },
    )
    .map((value) => {
      const plain = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
      if (format === 'json') return JSON.stringify(plain, null, 2);
      if (format === 'yaml') return toYaml(plain);
      try {
        return toToml(plain);
      } catch {
        return 'a = 1\n'; // a null or mixed list TOML cannot hold
      }
    });

const INJECTED = ['"', '{', ']', ': :', '\t- ', ',,', '= =', '[', '\u0001', '\n\t', '"\\q"', '}', '名 x'];

describe('the caret always points at a column within the line (property)', () => {
  it.each(['yaml', 'json', 'toml'] as const)('%s with an error injected at a random place', (format) => {
    fc.assert(
      fc.property(
        documentOf(format),
        fc.nat(),
        fc.constantFrom(...INJECTED),
        fc.boolean(),
        (text, at, injected, crlf) => {
          let broken = text.slice(0, at % (text.length + 1)) + injected + text.slice(at % (text.length + 1));
          if (crlf) broken = broken.replace(/\r?\n/g, '\r\n');
          let error: DocumentSyntaxError;
          try {
            PARSE[format](broken);
            return; // the injection happened to leave a valid document
          } catch (caught) {
            if (!(caught instanceof DocumentSyntaxError)) {
              expect((caught as { code?: string }).code).toMatch(/^DOCUMENT_/);
              return;
            }
            error = caught;
          }
          expect(error.message).not.toMatch(/[\n\r]/);
          expect(error.line).toBeDefined();
          const lines = broken.split(/\r?\n/);
          const line = lines[error.line! - 1];
          expect(line).toBeDefined();
          expect(error.column).toBeGreaterThanOrEqual(1);
          expect(error.column).toBeLessThanOrEqual([...line!.replace(/^\uFEFF/, '')].length + 1);
          const { number, shown, caret } = caretOf(error.excerpt);
          expect(number).toBe(String(error.line));
          const width = [...shown].reduce((sum, c) => sum + (c === '名' || c === '😀' ? 2 : 1), 0);
          expect(caret).toBeLessThanOrEqual(width);
          expect(shown).not.toMatch(/[\u0000-\u0008\u000a-\u001f]/);
        },
      ),
      { numRuns: 300 },
    );
  });
});
