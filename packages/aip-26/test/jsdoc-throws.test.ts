import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Issue 14, "Types and docs for hosts": the main entry points have JSDoc with an `@example`
// and the error codes they throw. A code named in an `@throws` must be one this package (or
// a workspace package it depends on) really throws, so a renamed code cannot linger in a doc.

const PACKAGE = join(import.meta.dirname, '..');
const PACKAGES = join(PACKAGE, '..');

/** Every .ts file under a folder. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'));
}

/** The error codes declared in a package's src: `code = 'X'`, `super('X', …)`, and `type …Code = 'X' | …`. */
function declaredCodes(pkg: string): Set<string> {
  const codes = new Set<string>();
  for (const text of sources(join(PACKAGES, pkg, 'src'))) {
    for (const m of text.matchAll(/\bcode(?: =|:) '([A-Z][A-Z0-9]*_[A-Z0-9_]+)'/g)) codes.add(m[1]!);
    for (const m of text.matchAll(/\bsuper\('([A-Z][A-Z0-9]*_[A-Z0-9_]+)'/g)) codes.add(m[1]!);
    for (const m of text.matchAll(/\btype \w*(?:Code|Problem) =((?:\s*\|?\s*'[A-Z0-9_]+')+)/g))
      for (const code of m[1]!.matchAll(/'([A-Z][A-Z0-9]*_[A-Z0-9_]+)'/g)) codes.add(code[1]!);
  }
  return codes;
}

/** This package's codes and those of the workspace packages it depends on. */
function knownCodes(): Set<string> {
  const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as {
    name: string;
    dependencies?: Record<string, string>;
  };
  const own = manifest.name.replace('@agentproto/', '');
  const deps = Object.keys(manifest.dependencies ?? {})
    .filter((name) => name.startsWith('@agentproto/'))
    .map((name) => name.replace('@agentproto/', ''));
  return new Set([own, ...deps].flatMap((pkg) => [...declaredCodes(pkg)]));
}

/** Each JSDoc block of src with the declaration it documents (`export function x`, `  x(`). */
function documented(): { name: string; doc: string }[] {
  const found: { name: string; doc: string }[] = [];
  for (const text of sources(join(PACKAGE, 'src'))) {
    for (const m of text.matchAll(
      /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*(?:export\s+)?(?:async\s+)?(?:function\s+)?(\w+)\s*[(<]/g,
    ))
      found.push({ name: m[2]!, doc: m[1]! });
  }
  return found;
}

/** The codes an `@throws` tag names: SCREAMING_CASE words in backticks, up to the next tag. */
function throwsCodes(doc: string): string[] {
  const codes: string[] = [];
  for (const tag of doc.split(/\n\s*\*\s*(?=@)/).filter((part) => part.startsWith('@throws')))
    for (const m of tag.matchAll(/`([A-Z][A-Z0-9]*_[A-Z0-9_]+)`/g)) codes.push(m[1]!);
  return codes;
}

describe('JSDoc of the entry points: an @example each, and @throws naming codes that exist', () => {
  const docs = documented();
  const known = knownCodes();

  it.each([
    ['defineCode', true],
    ['defineCodeWithReport', true],
    ['resolveRun', true],
    ['githubConnector', true],
    ['subprocessRunner', true],
    ['checkCode', false],
  ] as const)('%s has an @example and says what it throws', (name, throws) => {
    const doc = docs.find((d) => d.name === name)?.doc;
    expect(doc, `no JSDoc found for ${name}`).toBeDefined();
    expect(doc).toMatch(/@example\s/);
    if (throws) expect(throwsCodes(doc!).length, `${name} names no code in an @throws`).toBeGreaterThan(0);
  });

  it('every code an @throws names is an error code of this package or of a workspace package it depends on', () => {
    const named = docs.flatMap(({ name, doc }) => throwsCodes(doc).map((code) => ({ name, code })));
    expect(named.length).toBeGreaterThanOrEqual(20);
    expect(named.filter(({ code }) => !known.has(code))).toEqual([]);
  });

  it('the check can fail: a made-up code is not among the known ones', () => {
    expect(known.has('NOT_A_REAL_CODE')).toBe(false);
    expect(
      throwsCodes('\n * Text `NOT_CODE_A`.\n * @throws {X} `NOT_A_REAL_CODE`: never.\n * @example `NOT_CODE_B`'),
    ).toEqual(['NOT_A_REAL_CODE']);
  });
});
