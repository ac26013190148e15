import fc from 'fast-check';
import { hostileBytes } from './hostile-documents.js';

/**
 * Malformed documents made from a valid one: the conformance properties start from a document
 * an entry point accepts and change one to three things in it, so the code past the first
 * check (the part that trusts the shape) is reached, not only the refusal at the door.
 */

/** A tree `depth` levels deep: `[[[…]]]` or `{"a":{"a":…}}`, built without recursion. */
function nested(depth: number, form: 'array' | 'object'): unknown {
  let value: unknown = form === 'array' ? [] : {};
  for (let level = 1; level < depth; level += 1) value = form === 'array' ? [value] : { a: value };
  return value;
}

/**
 * An object holding own `__proto__`, `constructor` and `prototype` keys, as JSON.parse makes
 * them: code that copies it with `obj[key] = value` or merges it naively pollutes prototypes.
 */
function prototypeKeys(): unknown {
  return JSON.parse(
    '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"prototype":{"polluted":true}}',
  );
}

/** Values of every JSON type and the edges of each: NaN, -0, 1e308, huge strings and arrays, deep trees, prototype keys. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom<unknown>(
      null,
      true,
      false,
      0,
      -0,
      1,
      -1,
      0.5,
      1e308,
      -1e308,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      2 ** 53 + 2,
      '',
      ' ',
      '.',
      '..',
      '/',
      '../x',
      '\0',
      '\uFEFF',
      '\uD800',
      'a\nb',
      [],
      {},
      [null],
      [[]],
      [{}],
      { '': null },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.array(fc.oneof(fc.string({ maxLength: 5 }), fc.integer()), { maxLength: 4 }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.integer({ min: 1, max: 1 << 20 }).map((n) => 'x'.repeat(n)),
      fc.integer({ min: 1, max: 100_000 }).map((n) => Array.from({ length: n }, () => 'x')),
      fc
        .integer({ min: 1, max: 20_000 })
        .map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))),
      fc
        .tuple(fc.integer({ min: 2, max: 1_000 }), fc.constantFrom('array' as const, 'object' as const))
        .map(([depth, form]) => nested(depth, form)),
      fc.constant(null).map(() => prototypeKeys()),
    ),
  },
);

/** Keys a document does not define: prototype keys, empty, odd characters, near misses. */
const UNKNOWN_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '',
  ' ',
  '$ref',
  'x-unknown',
  'NAME',
  'a.b',
  '0',
  '\0',
  '\uFEFF',
] as const;

type Step = readonly (string | number)[];

/**
 * The places of a JSON-like value: the root, each key of each object, each item of each array,
 * walked without recursion and no deeper than 16 levels nor past 500 places (a mutation may
 * have put a huge or deep value in), so the fixture's own places are always among them.
 */
function placesOf(value: unknown): Step[] {
  const out: Step[] = [];
  const queue: [unknown, Step][] = [[value, []]];
  for (let index = 0; index < queue.length && out.length < 500; index += 1) {
    const [item, at] = queue[index]!;
    out.push(at);
    if (at.length >= 16 || item === null || typeof item !== 'object') continue;
    const entries: [string | number, unknown][] = Array.isArray(item)
      ? item.slice(0, 20).map((child, i) => [i, child])
      : Object.entries(item).slice(0, 50);
    for (const [key, child] of entries) queue.push([child, [...at, key]]);
  }
  return out;
}

type Mutation = { kind: 'replace' | 'delete' | 'add'; place: number; value: unknown; key: string };

/** An own property, whatever its name (`__proto__` too), as JSON.parse would define it. */
function defineOwn(target: object, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
}

function apply(document: unknown, mutation: Mutation): unknown {
  // The generators hand out the same constant objects to every run: a copy goes in, so no
  // run changes another's value, and a later step cannot make the document circular.
  const value = structuredClone(mutation.value);
  const places = placesOf(document);
  const path = places[mutation.place % places.length]!;
  if (path.length === 0) {
    if (mutation.kind === 'replace') return value;
    if (mutation.kind === 'add' && document !== null && typeof document === 'object' && !Array.isArray(document))
      defineOwn(document, mutation.key, value);
    return document;
  }
  let parent = document as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  const target = parent[last];
  if (mutation.kind === 'replace') defineOwn(parent, last, value);
  else if (mutation.kind === 'delete') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else if (target !== null && typeof target === 'object' && !Array.isArray(target))
    defineOwn(target, mutation.key, value);
  else if (Array.isArray(target)) target.push(value);
  else defineOwn(parent, last, value);
  return document;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('replace' as const, 'delete' as const, 'add' as const),
  place: fc.nat(),
  value: wrongValue,
  key: fc.oneof(fc.constantFrom(...UNKNOWN_KEYS), fc.string({ maxLength: 8 })),
});

/**
 * A valid document with one to three changes: a value replaced by one of another type (or an
 * edge of its own), a key or item deleted, an unknown key added (prototype keys among them).
 * The valid document is cloned first, so one fixture serves every run.
 */
export function malformedVariant(valid: unknown): fc.Arbitrary<unknown> {
  return fc
    .array(mutation, { minLength: 1, maxLength: 3 })
    .map((mutations) => mutations.reduce<unknown>((document, step) => apply(document, step), structuredClone(valid)));
}

/** JSON text of a value; NaN and ±Infinity become `null`, as JSON has no other spelling for them. */
function jsonText(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

/**
 * A malformed variant as file bytes: JSON text (YAML reads it too), sometimes cut short, in
 * UTF-8, UTF-16LE, behind a BOM, or with NULs or invalid UTF-8 spliced in.
 */
export function malformedDocumentBytes(valid: unknown): fc.Arbitrary<Uint8Array> {
  const text = fc
    .tuple(
      fc.oneof({ weight: 4, arbitrary: malformedVariant(valid) }, { weight: 1, arbitrary: fc.constant(valid) }),
      fc.oneof(
        { weight: 5, arbitrary: fc.constant(1) },
        { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) },
      ),
    )
    .map(([value, keep]) => {
      const whole = jsonText(value);
      return whole.slice(0, Math.floor(whole.length * keep));
    });
  return hostileBytes(text);
}

/**
 * Valid bytes (an archive, a bundle) damaged: cut short, bytes overwritten, a run of bytes
 * inserted or repeated. Most damage lands in a header, a length or a checksum somewhere.
 */
export function corruptedBytes(valid: Uint8Array): fc.Arbitrary<Uint8Array> {
  type Damage = (bytes: Buffer) => Buffer;
  // Offsets are taken modulo the length at the time, since an earlier step may have cut it.
  const within = (at: number, bytes: Buffer) => (bytes.length === 0 ? 0 : at % bytes.length);
  const damage: fc.Arbitrary<Damage> = fc.oneof<fc.Arbitrary<Damage>[]>(
    fc.nat().map((at) => (bytes: Buffer) => bytes.subarray(0, within(at, bytes))),
    fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => (bytes: Buffer) => {
      const copy = Buffer.from(bytes);
      if (copy.length > 0) copy[within(at, copy)] = byte;
      return copy;
    }),
    fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 64 })).map(
      ([at, run]) =>
        (bytes: Buffer) =>
          Buffer.concat([bytes.subarray(0, within(at, bytes)), run, bytes.subarray(within(at, bytes))]),
    ),
    fc
      .tuple(fc.nat(), fc.integer({ min: 1, max: 512 }), fc.integer({ min: 2, max: 200 }))
      .map(([at, length, times]) => (bytes: Buffer) => {
        const from = within(at, bytes);
        return Buffer.concat([
          bytes.subarray(0, from),
          ...Array.from({ length: times }, () => bytes.subarray(from, from + length)),
          bytes.subarray(from),
        ]);
      }),
  );
  return fc
    .array(damage, { minLength: 1, maxLength: 4 })
    .map((steps) => new Uint8Array(steps.reduce<Buffer>((bytes, step) => step(bytes), Buffer.from(valid))));
}

/**
 * Why an error is not a typed one, or undefined when it is: the packages' errors carry a
 * stable upper-case `code` (the CLI prints those as `CODE: message` and never as
 * "unexpected error"); a bare TypeError, RangeError or SyntaxError has none.
 */
export function untypedError(error: unknown): string | undefined {
  const code: unknown = error !== null && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return undefined;
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  return `${name}${code === undefined ? '' : ` (code ${String(code)})`}: ${message.slice(0, 300)}\n${error instanceof Error ? (error.stack ?? '').split('\n').slice(1, 6).join('\n') : ''}`;
}

/** A public entry point under the malformed-input property: what it is fed, and the call. */
export interface EntryPointUnderTest<I = unknown> {
  input: () => fc.Arbitrary<I>;
  call: (input: I) => unknown;
}

/**
 * The property every public parse/validate entry point keeps: on any generated input it
 * returns, or throws an error with a stable code (untypedError). The seed is the caller's,
 * so a failure replays with `FC_SEED=<seed>`.
 */
export async function assertReturnsOrThrowsCoded<I>(
  name: string,
  entry: EntryPointUnderTest<I>,
  options: { seed: number; numRuns: number },
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(entry.input(), async (input) => {
      try {
        await entry.call(input);
      } catch (error) {
        const untyped = untypedError(error);
        if (untyped !== undefined) throw new Error(`${name} threw an untyped error: ${untyped}`);
      }
    }),
    { seed: options.seed, numRuns: options.numRuns },
  );
}
