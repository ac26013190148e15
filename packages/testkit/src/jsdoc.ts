import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a package's JSDoc says of its entry points, read from its src/: each documented
 * declaration's comment, the codes each `@throws` names, and the error codes the package
 * (or a workspace package it depends on) really declares. A test checks the docs against it,
 * so a renamed code cannot linger in a doc.
 */
export interface PackageDocs {
  /** The JSDoc text of the declaration named `name` (`export function x`, a method `x(`). */
  docOf(name: string): string | undefined;
  /** Every code an `@throws` of any documented declaration names, with that declaration. */
  named: { name: string; code: string }[];
  /** The error codes declared in this package's src and its workspace dependencies'. */
  known: ReadonlySet<string>;
}

const CODE = '([A-Z][A-Z0-9]*_[A-Z0-9_]+)';

/** Every .ts file under a folder, as text. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'));
}

/**
 * The error codes declared in a package's src: `code = 'X'`, `super('X', …)`, `new …Error('X', …)`,
 * `type …Code = 'X' | …`, and union members written one a line (`  | 'X'`).
 */
function declaredCodes(packageDir: string): Set<string> {
  const codes = new Set<string>();
  for (const text of sources(join(packageDir, 'src'))) {
    for (const m of text.matchAll(new RegExp(`\\bcode(?: =|:) '${CODE}'`, 'g'))) codes.add(m[1]!);
    for (const m of text.matchAll(new RegExp(`\\bsuper\\('${CODE}'`, 'g'))) codes.add(m[1]!);
    // `new RegistryError('REGISTRY_INVALID', …)`, and a member of a union written one a line.
    for (const m of text.matchAll(new RegExp(`\\bnew \\w+Error\\('${CODE}'`, 'g'))) codes.add(m[1]!);
    for (const m of text.matchAll(new RegExp(`^\\s*\\|\\s*'${CODE}'`, 'gm'))) codes.add(m[1]!);
    for (const m of text.matchAll(/\btype \w*(?:Code|Problem) =((?:\s*\|?\s*'[A-Z0-9_]+')+)/g))
      for (const code of m[1]!.matchAll(new RegExp(`'${CODE}'`, 'g'))) codes.add(code[1]!);
  }
  return codes;
}

/** The codes an `@throws` tag names: SCREAMING_CASE words in backticks, up to the next tag. */
export function throwsCodes(doc: string): string[] {
  const codes: string[] = [];
  for (const tag of doc.split(/\n\s*\*\s*(?=@)/).filter((part) => part.startsWith('@throws')))
    for (const m of tag.matchAll(new RegExp(`\`${CODE}\``, 'g'))) codes.push(m[1]!);
  return codes;
}

/** Reads the JSDoc of the package at `packageDir` (a folder under packages/). */
export function packageDocs(packageDir: string): PackageDocs {
  const docs: { name: string; doc: string }[] = [];
  for (const text of sources(join(packageDir, 'src')))
    for (const m of text.matchAll(
      /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*(?:export\s+)?(?:async\s+)?(?:function\s+)?(\w+)\s*[(<]/g,
    ))
      docs.push({ name: m[2]!, doc: m[1]! });
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  const workspaceDeps = Object.keys(manifest.dependencies ?? {})
    .filter((name) => name.startsWith('@agentproto/'))
    .map((name) => join(packageDir, '..', name.replace('@agentproto/', '')));
  const known = new Set([packageDir, ...workspaceDeps].flatMap((dir) => [...declaredCodes(dir)]));
  return {
    docOf: (name) => docs.find((d) => d.name === name)?.doc,
    named: docs.flatMap(({ name, doc }) => throwsCodes(doc).map((code) => ({ name, code }))),
    known,
  };
}
