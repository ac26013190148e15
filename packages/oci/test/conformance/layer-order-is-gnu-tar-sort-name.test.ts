import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { gnuTarSortNameListing, tarListing } from '@agentproto/testkit';
import { describe, expect, it } from 'vitest';
import { packTree } from '../../src/index.js';
import { tempDir } from '../support/temp.js';

/**
 * One archive order for the whole SDK. AIP-26 ADAPTER.md, "Overlay merge": "The tar entry
 * order SHOULD be sorted (lexicographic by path) so the tarball itself is deterministic —
 * useful for content-addressed caching downstream." The store's layers (README, "object-"
 * row: "the tree, deterministic") and the plugin layers agentproto pushes are written by
 * `packTree`, in the order `sortInArchiveOrder` defines for every archive writer: GNU tar
 * `--sort=name`. Unlike a bundle, a layer is a real tree, so here the listing must match
 * with empty folders and links too.
 */

type Node = { file: string } | { dir: true } | { link: string };

async function makeTree(spec: Record<string, Node>): Promise<string> {
  const root = await tempDir('cache-order-');
  for (const [path, node] of Object.entries(spec)) {
    const abs = join(root, path);
    await mkdir(dirname(abs), { recursive: true });
    if ('file' in node) await writeFile(abs, node.file);
    else if ('dir' in node) await mkdir(abs, { recursive: true });
    else await symlink(node.link, abs);
  }
  return root;
}

describe('packTree lists a tree as GNU tar --sort=name does (ADAPTER.md "Overlay merge": "The tar entry order SHOULD be sorted (lexicographic by path)")', () => {
  it('a tree with names around "/", case, bytes above 0x7f, an empty folder and links', async () => {
    const root = await makeTree({
      'x/a.txt': { file: 'a' },
      'x/B.txt': { file: 'B' },
      'X/a': { file: 'upper' },
      'x-y.txt': { file: '-' },
      'x.txt': { file: '.' },
      'x y/z': { file: ' ' },
      'x!': { file: '!' },
      x0: { file: '0' },
      'x_/q': { file: '_' },
      'x\u007f': { file: 'del' },
      'x\u0080': { file: 'c2 80' },
      'é/f': { file: 'é' },
      éa: { file: 'éa' },
      '日本/語': { file: 'cjk' },
      '\u{1F600}': { file: 'emoji' },
      'empty/': { dir: true },
      'empty-not/x': { file: 'x' },
      'link-to-x': { link: 'x' },
      'x/link.txt': { link: 'a.txt' },
    });
    const ours = await tarListing(gunzipSync(await packTree(root)));
    expect(ours).toEqual(await gnuTarSortNameListing(root));
    const names = ours.map(([name]) => name);
    expect(names.indexOf('x/')).toBeLessThan(names.indexOf('x-y.txt'));
    expect(names.indexOf('empty/')).toBeLessThan(names.indexOf('empty-not/'));
  });

  const unit = fc.constantFrom('a', 'A', 'b', '0', '-', '.', '_', ' ', '~', 'é', '日', '\u{1F600}');
  const segment = fc.string({ unit, minLength: 1, maxLength: 3 }).filter((s) => s !== '.' && s !== '..');
  const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => segments.join('/'));
  // Files, plus some folders that stay empty; a path that is a folder of another is a folder.
  const tree = fc
    .uniqueArray(fc.tuple(path, fc.constantFrom<'file' | 'dir'>('file', 'file', 'file', 'dir')), {
      minLength: 1,
      maxLength: 25,
      selector: ([p]) => p,
    })
    .map((all) =>
      Object.fromEntries(
        all.map(([p, kind]): [string, Node] => [
          p,
          kind === 'dir' || all.some(([q]) => q.startsWith(`${p}/`)) ? { dir: true } : { file: p },
        ]),
      ),
    );

  it('every generated tree, with empty folders', async () => {
    await fc.assert(
      fc.asyncProperty(tree, async (spec) => {
        const root = await makeTree(spec);
        expect(await tarListing(gunzipSync(await packTree(root)))).toEqual(await gnuTarSortNameListing(root));
      }),
      { numRuns: 40 },
    );
  });
});
