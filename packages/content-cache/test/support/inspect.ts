import { existsSync, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** What a store root holds, read straight from disk. */
export function storeState(root: string) {
  const list = (folder: string) => (existsSync(join(root, folder)) ? readdirSync(join(root, folder)).sort() : []);
  return {
    objects: list('objects'),
    keys: list('keys'),
    links: list('links'),
    staging: list('staging'),
  };
}

/** Problems that must never be visible: objects without a marker, links that dangle. */
export function visibleProblems(root: string): string[] {
  const problems: string[] = [];
  const state = storeState(root);
  for (const id of state.objects) {
    if (!existsSync(join(root, 'objects', id, 'COMPLETE.json'))) problems.push(`object ${id} has no marker`);
  }
  for (const name of state.links) {
    const path = join(root, 'links', name);
    if (!lstatSync(path).isSymbolicLink()) problems.push(`link ${name} is not a link`);
    else if (!existsSync(resolve(join(root, 'links'), readlinkSync(path)))) problems.push(`link ${name} dangles`);
  }
  return problems;
}
