import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderings, startLinkSwapper, tempDir, writeOutsideSecret } from '@agentproto/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importPlugin } from '../../src/import/index.js';
import { openPluginReader } from '../../src/read/index.js';
import { validatePlugin } from '../../src/validate/index.js';
import { PLUGIN_100, json, skillMd } from '../support/validate-packages.js';

/**
 * A plugin uploader's attack on the reader: while the host reads the package, a process of
 * theirs exchanges a folder of the package with a link to a folder outside it, in a tight
 * loop. The outside folder holds the same names (and one of its own), each a canary of a
 * size no package file has.
 */
describe('a plugin whose folders are swapped for links while it is read', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    dir = await tempDir('plugins-race-');
  });
  afterAll(() => dir.cleanup());

  it('never returns, imports or reports a byte, size or name from outside the plugin root', async () => {
    const root = join(dir.path, 'plugin');
    const names = ['SKILL.md', 'notes.md', 'deep/more.md'];
    const outside = await writeOutsideSecret(join(dir.path, 'outside'), names);
    await mkdir(join(root, 'skills/a/deep'), { recursive: true });
    await writeFile(join(root, 'plugin.json'), json({ $schema: PLUGIN_100, name: 'p' }));
    await writeFile(join(root, 'skills/a/SKILL.md'), skillMd('a'));
    await writeFile(join(root, 'skills/a/notes.md'), 'inside notes\n');
    await writeFile(join(root, 'skills/a/deep/more.md'), 'inside, deeper\n');
    await mkdir(join(root, '.park'));
    await symlink(outside.dir, join(root, '.park/a'));

    const leaks: string[] = [];
    const check = (what: string, value: unknown) => {
      const text =
        Buffer.isBuffer(value) || value instanceof Uint8Array
          ? Buffer.from(value)
          : JSON.stringify(value, (_key, v: unknown) =>
              v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v instanceof Map ? [...v] : v,
            );
      const found = outside.leaksIn(text);
      if (found.length > 0) leaks.push(`${what}: ${found.join(', ')}`);
    };
    let rounds = 0;
    const swapper = await startLinkSwapper(join(root, 'skills/a'), join(root, '.park/a'));
    const started = performance.now();
    try {
      while (performance.now() - started < 3_000 && rounds < 2_000) {
        rounds += 1;
        try {
          const reader = openPluginReader(root);
          for (const path of ['skills/a/SKILL.md', 'skills/a/notes.md', 'skills/a/deep/more.md']) {
            const read = await reader.readFile(path);
            check(`readFile ${path}`, read.ok ? read.bytes : read);
          }
          check('list skills/a', await reader.list('skills/a'));
          check('list skills/a/deep', await reader.list('skills/a/deep'));
          check('findings', reader.findings);
          if (rounds % 10 === 0) {
            check('validatePlugin', await validatePlugin(root));
            const imported = await importPlugin(root);
            check('importPlugin', { findings: imported.findings, report: imported.report, content: imported.content });
          }
        } catch (error) {
          // The reader reports failures as findings; a throw is itself a finding to look into.
          for (const text of renderings(error)) check('thrown', text);
          leaks.push(`thrown: ${String(error)}`);
        }
      }
    } finally {
      expect(await swapper.stop()).toBeGreaterThan(100);
    }
    expect(leaks.slice(0, 5)).toEqual([]);
    expect(rounds).toBeGreaterThan(5);
  });
});
