import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { gnuTarSortNameListing, tarListing, type TarListed } from '@agentproto/testkit';
import { describe, expect, it } from 'vitest';
import { type CacheKey, openContentStore } from '@agentproto/content-cache';
import { defineCode, defineCodeWithReport } from '../../src/index.js';
import {
  bundlePathProblem,
  extractTarGz,
  readBundleEntries,
  writeBundle,
  type InMemoryEntry,
} from '../../src/tar/index.js';
import { tempDir } from '../fixtures/tar/temp.js';

/**
 * ADAPTER.md, "Overlay merge": "After merge, the host produces a tar.gz buffer. The tar entry
 * order SHOULD be sorted (lexicographic by path) so the tarball itself is deterministic —
 * useful for content-addressed caching downstream."
 *
 * "Lexicographic by path" is read the way GNU tar `--sort=name` (the reproducible-builds
 * convention, and what people compare a bundle with) sorts: path segment by segment, each by
 * its bytes, a folder right before its subtree. These tests compare every listing with the
 * real `tar -c --sort=name` of the same tree on disk, entry for entry (the merged map holds no
 * empty folder, so the trees here have none).
 */

async function bundleListing(bundle: Buffer): Promise<TarListed[]> {
  return tarListing(gunzipSync(bundle));
}

async function materialize(root: string, entries: readonly InMemoryEntry[]): Promise<void> {
  for (const entry of entries) {
    await mkdir(dirname(join(root, entry.path)), { recursive: true });
    await writeFile(join(root, entry.path), entry.data);
  }
}

// Names around "/" (0x2F) in byte order: " " 0x20, "!" 0x21, "-" 0x2D, "." 0x2E sort below
// it, "0" 0x30, upper case, "_" 0x5F, lower case and "~" above; "é" (C3 A9), "日" (E6 97 A5),
// U+FF61 (EF BD A1) and the emoji (F0 9F 98 80) above every ASCII byte. No two names differ
// only by case or Unicode form: defineCode refuses such twins.
const TRICKY: Record<string, string> = {
  'x/a.txt': 'x/a',
  'x/B.txt': 'x/B',
  'x/sub/deep.txt': 'deep',
  'x-y.txt': 'x-y',
  'x.txt': 'x.',
  'x y/z.txt': 'space',
  'x!': 'bang',
  x0: 'zero',
  'x_y/q.txt': 'underscore',
  'xa/r.txt': 'xa',
  'x~': 'tilde',
  'a.b/c': 'a.b',
  'a/b/c': 'a/b/c',
  'a/b.c': 'a/b.c',
  'a/b-c/d': 'a/b-c',
  'a-/e': 'a-',
  'Z.md': 'Z',
  'é/f': 'e-acute folder',
  éa: 'e-acute file',
  'e/f': 'e',
  '日本/語.txt': 'cjk',
  '\uFF61': 'halfwidth',
  '\u{1F600}': 'emoji',
};

describe('ADAPTER.md "Overlay merge": "The tar entry order SHOULD be sorted (lexicographic by path)", read as GNU tar --sort=name', () => {
  it('defineCode of a folder with tricky names lists entry for entry what `tar -c --sort=name` lists for that folder', async () => {
    const workspaceRoot = await tempDir('aip26-order-ws-');
    const tree = join(workspaceRoot, 'tree');
    await materialize(
      tree,
      Object.entries(TRICKY).map(([path, text]) => ({ path, data: Buffer.from(text) })),
    );
    const bundle = await defineCode({ workspaceRoot, code: { sources: [{ local: { path: 'tree', as: '.' } }] } });

    const ours = await bundleListing(bundle);
    const gnu = await gnuTarSortNameListing(tree);
    expect(ours).toEqual(gnu);
    expect(await gnuTarSortNameListing(tree, 'C.utf8')).toEqual(gnu);
    // What a plain byte sort of full paths got wrong: a folder comes before the names that
    // extend its name with a byte below "/".
    const names = ours.map(([name]) => name);
    expect(names.indexOf('x/')).toBeLessThan(names.indexOf('x-y.txt'));
    expect(names.indexOf('x/sub/deep.txt')).toBeLessThan(names.indexOf('x.txt'));
    expect(names.indexOf('a/b/c')).toBeLessThan(names.indexOf('a/b-c/'));
    expect(names.indexOf('a/b-c/d')).toBeLessThan(names.indexOf('a/b.c'));
  });

  it('writeBundle orders names that differ only by case or sort around "/" as GNU tar does', async () => {
    // writeBundle itself takes case twins (defineCode refuses them before it gets there).
    const entries: InMemoryEntry[] = [
      'X/a',
      'x/a',
      'X.txt',
      'x.txt',
      'x-/b',
      'x-c',
      'Xx',
      'x\u007f',
      'x\u0080',
      '\u00ff',
    ].map((path) => ({ path, data: Buffer.from(path) }));
    const root = await tempDir('aip26-order-case-');
    await materialize(root, entries);
    expect(await bundleListing(await writeBundle(entries))).toEqual(await gnuTarSortNameListing(root));
  });

  it('the readers list a bundle in the order it is written: readBundleEntries and extractTarGz', async () => {
    const root = await tempDir('aip26-order-read-');
    const entries = Object.entries(TRICKY).map(([path, text]): InMemoryEntry => ({ path, data: Buffer.from(text) }));
    await materialize(join(root, 'tree'), entries);
    const gnuFiles = (await gnuTarSortNameListing(join(root, 'tree')))
      .filter(([, type]) => type === 'file')
      .map(([name]) => name);
    const bundle = await writeBundle(entries);
    expect((await readBundleEntries(bundle, { maxBytes: 1 << 20, maxFiles: 100 })).map((e) => e.path)).toEqual(
      gnuFiles,
    );
    expect((await extractTarGz(bundle, join(root, 'out'), { maxBytes: 1 << 20, maxFiles: 100 })).files).toEqual(
      gnuFiles,
    );
  });
});

/**
 * ADAPTER.md, "Conformance rules" 3: "Given the same source list and SHA-pinned github refs,
 * `defineCode` MUST produce a byte-identical tarball." A store kept across an upgrade still
 * holds bundles of earlier layouts (layout 1 sorted full paths by their bytes, layout 2
 * deflated at memLevel 8); handing one out would make the same sources give two tarballs,
 * depending on what the store holds.
 */
describe('ADAPTER.md conformance rule 3: a bundle the store kept from an earlier layout is never handed out', () => {
  const layouts: [string, (workspaceRoot: string) => Promise<unknown>][] = [
    [
      'a plan of pinned sources (kept with its report)',
      async () => ({
        sources: [{ inline: { path: 'x/a.txt', content: 'a' } }, { inline: { path: 'x-y.txt', content: 'b' } }],
      }),
    ],
    [
      'a plan with a workspace source (kept by the merged files)',
      async (workspaceRoot) => {
        await materialize(join(workspaceRoot, 'tree'), [
          { path: 'x/a.txt', data: Buffer.from('a') },
          { path: 'x-y.txt', data: Buffer.from('b') },
        ]);
        return { sources: [{ local: { path: 'tree', as: '.' } }] };
      },
    ],
  ];
  it.each(layouts)('%s', async (_label, makeCode) => {
    const workspaceRoot = await tempDir('aip26-order-cache-');
    const code = (await makeCode(workspaceRoot)) as Parameters<typeof defineCode>[0]['code'];
    const fresh = await defineCode({ workspaceRoot, code });

    // Learn the digests this writer files bundles under, from a store of its own.
    const learn = await openContentStore({ root: join(workspaceRoot, 'learn') });
    await defineCodeWithReport({ workspaceRoot, code, cache: learn });
    const bundleKeys = (await learn.list()).keys
      .map(({ key }) => key)
      .filter((key) => key.provider.startsWith('aip-26-'));
    expect(bundleKeys.length).toBeGreaterThan(0);

    // Another store, upgraded from earlier writers, holding an older tarball under each key
    // they used. Layout 1: declaration { format: 1, gzipLevel: 6 }, content id the digest.
    // Layout 2 (deflated at memLevel 8): format 2, content id `<digest>;layout=2;gzip=6`.
    const upgraded = await openContentStore({ root: join(workspaceRoot, 'upgraded') });
    const stale = await writeBundle([{ path: 'stale.txt', data: Buffer.from('made by an earlier layout') }]);
    for (const { provider, version } of bundleKeys) {
      const earlier: CacheKey[] = [
        { provider, declaration: { format: 1, gzipLevel: 6 }, version, contentId: version },
        { provider, declaration: { format: 2, gzipLevel: 6 }, version, contentId: `${version};layout=2;gzip=6` },
      ];
      for (const key of earlier) {
        await upgraded.acquire(key, async (_destination, ctx) => {
          await ctx.writeFile('bundle.tar.gz', stale);
          await ctx.writeFile('report.json', `${JSON.stringify({ sha256: 'stale', sources: [] })}\n`);
        });
      }
    }
    const { bundle } = await defineCodeWithReport({ workspaceRoot, code, cache: upgraded });
    expect(bundle.equals(fresh)).toBe(true);
  });
});

// Generated trees: segments from an alphabet rich in the bytes that sort around "/" and in
// multi-byte UTF-8, short enough for any filesystem; prefixes of one another are common.
const unit = fc.constantFrom(
  'a',
  'b',
  'A',
  'B',
  'z',
  '0',
  '9',
  '-',
  '.',
  '_',
  ' ',
  '!',
  '~',
  '+',
  'é',
  'ß',
  '日',
  '\uFF61',
  '\u{1F600}',
);
const segment = fc.string({ unit, minLength: 1, maxLength: 4 }).filter((s) => s !== '.' && s !== '..');
const path = fc
  .array(segment, { minLength: 1, maxLength: 4 })
  .map((segments) => segments.join('/'))
  .filter((p) => bundlePathProblem(p) === undefined);
/** Distinct paths, none a file that is also a folder of another (writeBundle refuses that). */
const tree = fc
  .uniqueArray(path, { minLength: 1, maxLength: 30 })
  .map((all) => all.filter((p) => !all.some((q) => q.startsWith(`${p}/`))));

describe('for every generated tree: the bundle of its files lists what `tar -c --sort=name` lists', () => {
  it('writeBundle(files of T) lists, entry for entry, the GNU tar --sort=name listing of T', async () => {
    const parent = await tempDir('aip26-order-prop-');
    let round = 0;
    await fc.assert(
      fc.asyncProperty(tree, async (paths) => {
        const root = join(parent, `t${round++}`);
        const entries = paths.map((p): InMemoryEntry => ({ path: p, data: Buffer.from(p) }));
        await materialize(root, entries);
        expect(await bundleListing(await writeBundle(entries))).toEqual(await gnuTarSortNameListing(root));
      }),
      { numRuns: 60 },
    );
  });
});
