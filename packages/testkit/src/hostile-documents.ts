import fc from 'fast-check';

/**
 * Pieces of hostile YAML, JSON and TOML: openers of every nesting form (flow, block, compact,
 * dotted TOML keys), indicators the YAML parser answers with an error each, properties,
 * quotes left open, control characters and a BOM. Repeated from once to 150,000 times.
 */
const UNITS = [
  '[',
  '{',
  '[[',
  '{a: ',
  '[a, ',
  '{"a": ',
  '{b=',
  'a.',
  ':',
  ': ',
  '- ',
  '? ',
  'a: ',
  '&a ',
  '*a ',
  '!t ',
  '!!binary ',
  '<<: *a\n',
  '"',
  "'",
  '\\',
  '#',
  '|',
  '>',
  ',',
  ']',
  '}',
  '\n',
  '\n  ',
  '\r',
  '\t',
  '\0',
  '\uFEFF',
  '\u2028',
  '𝄞',
  'a = ',
  '---\n',
  '...\n',
  '%YAML 1.2\n',
] as const;

const PREFIXES = ['', 'name: ', 'a = ', '{"a": ', 'a:\n  ', 'plugin:\n  name: '] as const;

/** Runs of hostile units: most small, some past every limit (150,000 `[` took most of a 256 MiB heap). */
export const hostileText: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(...PREFIXES),
    fc.array(
      fc.tuple(
        fc.constantFrom(...UNITS),
        fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 5_000 }), fc.constantFrom(40_000, 150_000)),
      ),
      { minLength: 1, maxLength: 3 },
    ),
  )
  .map(([prefix, runs]) => prefix + runs.map(([unit, count]) => unit.repeat(count)).join(''));

/** "Billion laughs": each level an anchored list of `width` aliases of the level below. */
export const aliasBomb: fc.Arbitrary<string> = fc
  .record({ levels: fc.integer({ min: 2, max: 12 }), width: fc.integer({ min: 2, max: 12 }) })
  .map(({ levels, width }) => {
    const lines = [`l0: &l0 [${Array.from({ length: width }, () => '"laugh"').join(', ')}]`];
    for (let level = 1; level < levels; level += 1)
      lines.push(`l${level}: &l${level} [${Array.from({ length: width }, () => `*l${level - 1}`).join(', ')}]`);
    return `${lines.join('\n')}\n`;
  });

/** Many keys (up to 60,000 lines) or one huge scalar (up to 400,000 characters), as YAML, TOML or JSON. */
export const bulkyDocument: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 1, max: 60_000 }).map((n) => Array.from({ length: n }, (_, i) => `k${i}: ${i}`).join('\n')),
  fc.integer({ min: 1, max: 60_000 }).map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}": ${i}`).join(',')}}`),
  fc.integer({ min: 1, max: 60_000 }).map((n) => Array.from({ length: n }, (_, i) => `k${i} = ${i}`).join('\n')),
  fc.integer({ min: 1, max: 400_000 }).map((n) => `name: "${'x'.repeat(n)}"`),
);

/** The text as bytes: UTF-8, UTF-16LE, behind a BOM, with NULs or invalid UTF-8 bytes spliced in. */
export function hostileBytes(text: fc.Arbitrary<string>): fc.Arbitrary<Uint8Array> {
  return fc
    .tuple(text, fc.constantFrom('utf8', 'utf16le', 'bom', 'nul', 'invalid'), fc.nat())
    .map(([value, encoding, at]) => {
      const utf8 = Buffer.from(value, 'utf8');
      const cut = utf8.length === 0 ? 0 : at % utf8.length;
      switch (encoding) {
        case 'utf16le':
          return new Uint8Array(Buffer.from(value, 'utf16le'));
        case 'bom':
          return new Uint8Array(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8]));
        case 'nul':
          return new Uint8Array(Buffer.concat([utf8.subarray(0, cut), Buffer.alloc(1 + (at % 3)), utf8.subarray(cut)]));
        case 'invalid':
          return new Uint8Array(
            Buffer.concat([utf8.subarray(0, cut), Buffer.from([0xff, 0xc3, 0x28]), utf8.subarray(cut)]),
          );
        default:
          return new Uint8Array(utf8);
      }
    });
}

/** Any hostile document, as bytes. */
export const hostileDocument: fc.Arbitrary<Uint8Array> = hostileBytes(
  fc.oneof(
    { weight: 3, arbitrary: hostileText },
    { weight: 1, arbitrary: aliasBomb },
    { weight: 1, arbitrary: bulkyDocument },
  ),
);

/** Hostile SKILL.md files: a hostile document as the front matter, closed or not, after `name: x`. */
export const hostileSkillMd: fc.Arbitrary<Uint8Array> = fc
  .tuple(
    fc.oneof(
      { weight: 3, arbitrary: hostileText },
      { weight: 1, arbitrary: aliasBomb },
      { weight: 1, arbitrary: bulkyDocument },
    ),
    fc.boolean(),
    fc.constantFrom('utf8', 'bom', 'nul'),
  )
  .map(([text, closed, encoding]) => {
    const file = `---\nname: x\ndescription: d\n${text}\n${closed ? '---\nbody\n' : ''}`;
    const bytes = Buffer.from(file, 'utf8');
    if (encoding === 'bom') return new Uint8Array(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]));
    if (encoding === 'nul')
      return new Uint8Array(Buffer.concat([bytes.subarray(0, 20), Buffer.alloc(1), bytes.subarray(20)]));
    return new Uint8Array(bytes);
  });

/** The reproductions: `name: ` and 50,000 `:` or `[`, and the 589-byte upload's 350,000 `[`. */
export const REPRODUCTIONS = {
  colons: `name: ${':'.repeat(50_000)}`,
  brackets: `name: ${'['.repeat(50_000)}`,
  upload: `name: ${'['.repeat(350_000)}`,
} as const;
