// What a worker of runBounded calls (hostile-declarations-end-in-typed-errors.test.ts):
// parseSkillDeclarationText and parseSkillDeclaration on hostile input, in the worker's
// bounded heap.
import { parseSkillDeclaration, parseSkillDeclarationText } from '../../../src/entries/index.js';

/** The names a declaration's text installs. */
export function parseText({ format, bytes }: { format: 'yaml' | 'json'; bytes: Uint8Array }): string[] {
  return parseSkillDeclarationText(bytes, { source: `skills.${format}`, format }).map((source) => source.name);
}

/** A parsed declaration of `entries` entries, each with a config nested `depth` deep and `width` wide. */
export function parseValue({ entries, depth, width }: { entries: number; depth: number; width: number }): number {
  let config: unknown = 'leaf';
  for (let level = 0; level < depth; level += 1)
    config = Object.fromEntries(Array.from({ length: width }, (_, i) => [`k${i}`, config]));
  const declaration = Array.from({ length: entries }, (_, i) => ({
    provider: 'local',
    source: '/srv/skills',
    version: 'v1',
    name: `s${i}`,
    config: { c: config },
  }));
  return parseSkillDeclaration(declaration).length;
}
