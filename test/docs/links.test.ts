import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Every file a document names is there: the root README, SECURITY.md (which names the test
// that proves each promise) and every package's and example's README. A file moved between
// packages without its mentions fails here, naming the document and the path.
const root = resolve(import.meta.dirname, '../..');

function documents(): string[] {
  const found = ['README.md', 'SECURITY.md'];
  for (const group of ['packages', 'examples']) {
    for (const name of readdirSync(join(root, group))) {
      const readme = join(group, name, 'README.md');
      if (existsSync(join(root, readme))) found.push(readme);
    }
  }
  return found;
}

/** Relative markdown link targets, without their `#fragment`. */
function linkTargets(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!.split('#')[0]!)
    .filter((target) => target !== '' && !/^[a-z]+:/i.test(target));
}

/**
 * Source and test files named in code spans, such as `aip-26/test/security/workspace-race.test.ts`
 * or `packages/git/src/engine.ts`, read from the packages folder or the repository root.
 */
function namedFiles(text: string): string[] {
  return [
    ...text.matchAll(/`((?:packages\/|examples\/)?[a-z0-9-]+\/(?:src|test)\/[A-Za-z0-9_./-]+\.(?:ts|mjs|md|json))`/g),
  ].map((match) => match[1]!);
}

describe('documents name files that exist', () => {
  for (const document of documents()) {
    it(document, () => {
      const text = readFileSync(join(root, document), 'utf8');
      const missing: string[] = [];
      for (const target of linkTargets(text)) {
        if (!existsSync(resolve(root, dirname(document), decodeURIComponent(target)))) missing.push(target);
      }
      for (const file of namedFiles(text)) {
        const candidates = [root, join(root, 'packages'), join(root, 'examples'), join(root, dirname(document))].map(
          (base) => join(base, file),
        );
        if (!candidates.some((candidate) => existsSync(candidate))) missing.push(file);
      }
      expect(missing, `${relative(root, join(root, document))} names files that are not there`).toEqual([]);
    });
  }
});
