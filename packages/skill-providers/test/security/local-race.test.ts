import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hashTree, openContentStore } from '@agentproto/content-cache';
import { type FetchContext, createRegistry, localProvider, prepareSkills } from '@agentproto/skill-providers';
import { renderings, startLinkSwapper, writeOutsideSecret } from '@agentproto/testkit';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';

/** Every file of a published skill, read back from the store. */
async function filesOf(dir: string): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile())
      out.push(await readFile(join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name)));
  }
  return out;
}

/**
 * The owner of a local skill folder races the host: a process of theirs exchanges a folder
 * of the skill with a link to a folder outside the source, in a tight loop, while the host
 * hashes (resolve) and copies (fetch) it. The outside folder holds the same names and one
 * of its own, each a canary of a size no skill file has.
 */
describe('a local skill folder whose folders are swapped for links while it is prepared', () => {
  it('never publishes, hashes or reports a byte, size or name from outside the source folder', async () => {
    const work = await tempDir();
    const source = join(work, 'source');
    const names = ['SKILL.md', 'notes.md', 'deep/more.md'];
    const outside = await writeOutsideSecret(join(work, 'outside'), names);
    await mkdir(join(source, 'skills/a/deep'), { recursive: true });
    await writeFile(join(source, 'skills/a/SKILL.md'), '# a\n');
    await writeFile(join(source, 'skills/a/notes.md'), 'inside notes\n');
    await writeFile(join(source, 'skills/a/deep/more.md'), 'inside, deeper\n');
    await mkdir(join(source, '.park/a'), { recursive: true });
    // The swap happens one level below the skill, and at the skill folder itself.
    await symlink(join(outside.dir, 'deep'), join(source, '.park/deep'));
    await symlink(outside.dir, join(source, '.park/a-link'));
    const honest = (await hashTree(join(source, 'skills/a'))).digest;
    // What the folder is at an instant when its `deep` folder stands swapped: a tree with a
    // link (recorded by its text, never followed). A resolve may see that; the store never
    // publishes it, since the link leads out.
    const swappedState = join(work, 'swapped-state');
    await mkdir(swappedState);
    for (const name of ['SKILL.md', 'notes.md'])
      await writeFile(join(swappedState, name), await readFile(join(source, 'skills/a', name)));
    await symlink(join(outside.dir, 'deep'), join(swappedState, 'deep'));
    const seen = new Set([honest, (await hashTree(swappedState)).digest]);

    const registry = createRegistry([localProvider({ roots: [work] })]);
    const entry = { provider: 'local', source, version: '*', path: 'skills/a', name: 'a' };
    const declared = { ...entry, config: {} };
    const leaks: string[] = [];
    const check = (what: string, text: string | Buffer) => {
      const found = outside.leaksIn(text);
      if (found.length > 0) leaks.push(`${what}: ${found.join(', ')}`);
    };
    let prepared = 0;
    let calls = 0;
    let refused = 0;
    const provider = localProvider({ roots: [work] });
    const context = { signal: new AbortController().signal } as FetchContext;
    // One swap at a time (nested swaps would move the outside folder itself around, which
    // its owner, the host, would never let the racer do): below the skill, then the skill folder.
    for (const [phase, [a, b]] of [
      [join(source, 'skills/a/deep'), join(source, '.park/deep')],
      [join(source, 'skills/a'), join(source, '.park/a-link')],
    ].entries()) {
      const swapper = await startLinkSwapper(a!, b!);
      try {
        const started = performance.now();
        for (let round = 0; round < 200 && performance.now() - started < 1_500; round++) {
          // A fresh store each round: every preparation resolves and fetches.
          const cache = await openContentStore({ root: join(work, `store-${phase}-${round}`) });
          try {
            const [skill] = await prepareSkills([entry], { cache, registry });
            prepared += 1;
            // Only the honest tree is ever published: its digest, and none of the outside bytes.
            if (skill!.version !== honest)
              leaks.push(`published version ${skill!.version}, not the folder's own ${honest}`);
            for (const file of await filesOf(skill!.dir)) check('published file', file);
          } catch (error) {
            refused += 1;
            for (const text of renderings(error)) check('error', text);
          }
        }
        // The provider's own calls, many more times in the same while: resolve hashes the
        // folder, fetch copies it into a fresh destination.
        const direct = performance.now();
        for (let round = 0; performance.now() - direct < 1_500; round++) {
          calls += 1;
          try {
            const resolved = await provider.resolve(declared, context);
            if (!seen.has(resolved.contentId))
              leaks.push(`resolved ${resolved.contentId}, a tree the folder never was`);
            const destination = join(work, `fetched-${phase}-${round}`);
            await provider.fetch(declared, resolved, { ...context, destination });
            for (const file of await filesOf(destination)) check('fetched file', file);
          } catch (error) {
            refused += 1;
            for (const text of renderings(error)) check('error', text);
          }
        }
      } finally {
        expect(await swapper.stop()).toBeGreaterThan(100);
      }
    }
    expect(leaks.slice(0, 5)).toEqual([]);
    expect(prepared + refused).toBeGreaterThan(3);
    expect(calls).toBeGreaterThan(3);
  });
});
