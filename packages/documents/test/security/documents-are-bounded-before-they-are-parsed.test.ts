import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DOCUMENT_LIMITS,
  DocumentError,
  FRONTMATTER_LIMITS,
  findFrontmatter,
  parseUntrustedJson,
  parseUntrustedToml,
  parseUntrustedYaml,
  readBoundedFile,
} from '../../src/index.js';

const SECRET = 'sk-live-9f8e7d6c5b4a';
const source = 'doc';
const codeOf = (parse: () => unknown): string | undefined => {
  try {
    parse();
    return undefined;
  } catch (error) {
    if (!(error instanceof DocumentError)) throw error;
    expect(error.message).not.toContain(SECRET);
    return error.code;
  }
};
const yaml = (text: string | Uint8Array) => () => parseUntrustedYaml(text, { source });
const json = (text: string | Uint8Array) => () => parseUntrustedJson(text, { source });
const toml = (text: string | Uint8Array) => () => parseUntrustedToml(text, { source });
const bomb = [
  'a0: &a0 [x, x, x, x, x, x, x, x, x, x]',
  ...Array.from({ length: 9 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(', ')}]`),
].join('\n');

describe('untrusted documents: every rule ends in its DocumentError, and no message quotes the text', () => {
  it.each([
    ['YAML over maxBytes, as text', 'DOCUMENT_TOO_LARGE', yaml(`k: "${'x'.repeat(DOCUMENT_LIMITS.maxBytes)}"`)],
    ['YAML over maxBytes, as bytes', 'DOCUMENT_TOO_LARGE', yaml(new Uint8Array(DOCUMENT_LIMITS.maxBytes + 1))],
    [
      'YAML over maxBytes only in UTF-8 (multi-byte characters)',
      'DOCUMENT_TOO_LARGE',
      yaml(`k: "${'é'.repeat(DOCUMENT_LIMITS.maxBytes / 2)}"`),
    ],
    ['YAML flow lists 65 deep', 'DOCUMENT_TOO_DEEP', yaml(`k: ${'['.repeat(65)}${']'.repeat(65)}`)],
    ['YAML flow maps 65 deep', 'DOCUMENT_TOO_DEEP', yaml(`k: ${'{a: '.repeat(65)}1${'}'.repeat(65)}`)],
    ['YAML compact block lists 65 deep (`- - - …`)', 'DOCUMENT_TOO_DEEP', yaml(`${'- '.repeat(65)}x`)],
    [
      'YAML block maps 65 deep by indentation',
      'DOCUMENT_TOO_DEEP',
      yaml(`${Array.from({ length: 65 }, (_, i) => `${' '.repeat(i)}a:`).join('\n')} 1`),
    ],
    ["YAML: the issue's `name: ` and 50,000 `[`", 'DOCUMENT_TOO_DEEP', yaml(`name: ${'['.repeat(50_000)}`)],
    ['a YAML alias bomb (10^10 values)', 'DOCUMENT_TOO_COMPLEX', yaml(bomb)],
    [
      'a YAML alias that contains itself (a cycle, expanded until the depth limit)',
      'DOCUMENT_TOO_DEEP',
      yaml('a: &a [x, *a]'),
    ],
    [
      'YAML maps as keys of maps (once exponential)',
      'DOCUMENT_SYNTAX',
      yaml(`k: ${'{'.repeat(40)}a: 1${'}: 1'.repeat(40)}`),
    ],
    ['YAML duplicate keys, also 1 and "1"', 'DOCUMENT_SYNTAX', yaml(`1: ${SECRET}\n"1": b`)],
    ['a YAML explicit tag', 'DOCUMENT_SYNTAX', yaml(`k: !!binary ${Buffer.from(SECRET).toString('base64')}`)],
    ['a second YAML document', 'DOCUMENT_SYNTAX', yaml(`k: ${SECRET}\n---\nk: 2`)],
    ['YAML bytes that are not UTF-8', 'DOCUMENT_SYNTAX', yaml(new Uint8Array([0x6b, 0x3a, 0x20, 0xff]))],
    ['broken YAML after a secret', 'DOCUMENT_SYNTAX', yaml(`k: ${SECRET}\n  - : ]`)],
    ['JSON lists 65 deep', 'DOCUMENT_TOO_DEEP', json(`${'['.repeat(65)}${']'.repeat(65)}`)],
    ['JSON 60,000 deep', 'DOCUMENT_TOO_DEEP', json(`${'['.repeat(60_000)}`)],
    [
      'JSON of 1,001 values where 1,000 are allowed',
      'DOCUMENT_TOO_COMPLEX',
      () => parseUntrustedJson(`[${'0,'.repeat(1_000)}0]`, { source, limits: { maxNodes: 1_000 } }),
    ],
    ['broken JSON after a secret', 'DOCUMENT_SYNTAX', json(`{"k": "${SECRET}" x}`)],
    ['JSON behind a BOM', 'DOCUMENT_SYNTAX', json('\uFEFF{}')],
    ['TOML inline arrays 65 deep', 'DOCUMENT_TOO_DEEP', toml(`a = ${'['.repeat(65)}${']'.repeat(65)}`)],
    ['TOML tables 65 deep by dotted keys', 'DOCUMENT_TOO_DEEP', toml(`${'a.'.repeat(65)}a = 1`)],
    ['broken TOML after a secret', 'DOCUMENT_SYNTAX', toml(`k = "${SECRET}" x`)],
  ] as const)('%s: %s', (_label, code, parse) => {
    expect(codeOf(parse)).toBe(code);
  });

  it('reads back plain data: maps as plain objects, a __proto__ key as data, strings where YAML 1.1 saw booleans', () => {
    const value = parseUntrustedYaml(
      'a: {b: [1, "x[[["]}\n__proto__: {polluted: true}\nyes: no\nref: &r [1]\nuse: *r\n',
      { source },
    ) as Record<string, unknown>;
    expect(value).toEqual({ a: { b: [1, 'x[[['] }, ['__proto__']: { polluted: true }, yes: 'no', ref: [1], use: [1] });
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(parseUntrustedToml('[plugin]\nname = "x"\n', { source })).toEqual({ plugin: { name: 'x' } });
  });

  it('JSON within the limits reads back as JSON.parse reads it (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
        const text = JSON.stringify(value);
        expect(parseUntrustedJson(text, { source })).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it('readBoundedFile refuses a file over the limit from its size, and reads one at the limit', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bounded-file-'));
    try {
      await writeFile(join(dir, 'big.yaml'), Buffer.alloc(1025, 0x61));
      await writeFile(join(dir, 'ok.yaml'), Buffer.alloc(1024, 0x61));
      await expect(readBoundedFile(join(dir, 'big.yaml'), 1024, 'yaml')).rejects.toMatchObject({
        code: 'DOCUMENT_TOO_LARGE',
        limit: 1024,
        size: 1025,
      });
      expect((await readBoundedFile(join(dir, 'ok.yaml'), 1024, 'yaml')).length).toBe(1024);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('findFrontmatter: delimiter lines found without splitting the body, and never past the limit', () => {
  it.each([
    ['---\na: 1\n---\nbody', { found: 'block', yaml: 'a: 1\n', yamlStart: 4, body: 'body' }],
    ['---\r\na: 1\r\n---\r\nbody\r\n', { found: 'block', yaml: 'a: 1\r\n', yamlStart: 5, body: 'body\r\n' }],
    ['---\n---', { found: 'block', yaml: '', yamlStart: 4, body: '' }],
    ['--- \na: 1\n---\n', { found: 'missing' }],
    ['---\na: 1\n----\n', { found: 'unterminated' }],
    [
      `---\n${'a'.repeat(FRONTMATTER_LIMITS.maxBytes + 1)}\n---\n`,
      { found: 'too-large', limit: FRONTMATTER_LIMITS.maxBytes },
    ],
    [`---\n${'a'.repeat(FRONTMATTER_LIMITS.maxBytes + 1)}\n`, { found: 'unterminated' }],
  ] as const)('%j', (text, expected) => {
    expect(findFrontmatter(text, FRONTMATTER_LIMITS.maxBytes)).toEqual(expected);
  });

  it('a body of a million lines costs no time to skip', () => {
    const text = `---\na: 1\n---\n${'line\n'.repeat(1_000_000)}`;
    const started = performance.now();
    expect(findFrontmatter(text, FRONTMATTER_LIMITS.maxBytes)).toMatchObject({ found: 'block', yaml: 'a: 1\n' });
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
