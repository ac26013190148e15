import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bundlePathProblem,
  extractTarGz,
  readBundleEntries,
  writeBundle,
  type InMemoryEntry as BundleEntry,
} from '../src/tar/index.js';
import { sha256 } from './fixtures/tar/sample-bundle.js';
import { tempDir } from './fixtures/tar/temp.js';

// Characters that stress ordering and encoding: ASCII both cases, punctuation that sorts
// around "/", dots, spaces, 2-, 3- and 4-byte UTF-8 (the emoji is a UTF-16 surrogate pair).
const unit = fc.constantFrom('a', 'b', 'Z', '0', '-', '_', '.', ' ', '~', ':', 'é', 'ß', '日', '\uFF61', '\u{1F600}');
const segment = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit, minLength: 1, maxLength: 8 }) },
  // Long segments push names past ustar's 100 + 155 bytes, into pax headers.
  { weight: 1, arbitrary: fc.string({ unit, minLength: 60, maxLength: 120 }) },
);
const path = fc
  .array(segment, { minLength: 1, maxLength: 5 })
  .map((segments) => segments.join('/'))
  .filter((p) => bundlePathProblem(p) === undefined);

/** Safe, distinct paths, none a folder of another (that would be a refused input). */
const paths = fc
  .uniqueArray(path, { minLength: 0, maxLength: 25 })
  .map((all) => all.filter((p) => !all.some((q) => q.startsWith(`${p}/`))));

const entries = paths
  .chain((ps) =>
    fc.tuple(
      ...ps.map((p) =>
        fc.record({ path: fc.constant(p), data: fc.uint8Array({ maxLength: 3000 }), executable: fc.boolean() }),
      ),
    ),
  )
  .map((records) =>
    records.map((r): BundleEntry => ({ path: r.path, data: Buffer.from(r.data), executable: r.executable })),
  );

/**
 * The archive order (GNU tar --sort=name), written out here independently of the code under
 * test: paths compared segment by segment, each segment by its UTF-8 bytes, a path before
 * the paths below it.
 */
function inArchiveOrder(list: readonly BundleEntry[]): BundleEntry[] {
  const compare = (a: string, b: string): number => {
    const x = a.split('/');
    const y = b.split('/');
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const order = Buffer.compare(Buffer.from(x[i]!), Buffer.from(y[i]!));
      if (order !== 0) return order;
    }
    return x.length - y.length;
  };
  return [...list].sort((a, b) => compare(a.path, b.path));
}

const limits = { maxBytes: 64 << 20, maxFiles: 1000 };
const comparable = (list: readonly BundleEntry[]) => list.map((e) => [e.path, sha256(e.data), e.executable === true]);

describe('writeBundle and the readers, for all safe inputs', () => {
  it('writeBundle of a shuffled input is byte-identical to writeBundle of the input', async () => {
    await fc.assert(
      fc.asyncProperty(
        entries.chain((list) =>
          fc.tuple(fc.constant(list), fc.shuffledSubarray(list, { minLength: list.length, maxLength: list.length })),
        ),
        async ([list, reordered]) => {
          expect(sha256(await writeBundle(reordered))).toBe(sha256(await writeBundle(list)));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('readBundleEntries(writeBundle(entries)) gives back exactly the entries, in archive order', async () => {
    await fc.assert(
      fc.asyncProperty(entries, async (list) => {
        const back = await readBundleEntries(await writeBundle(list), limits);
        expect(comparable(back)).toEqual(comparable(inArchiveOrder(list)));
      }),
      { numRuns: 80 },
    );
  });

  it('extractTarGz(writeBundle(entries)) writes exactly the entries, with their modes', async () => {
    const parent = await tempDir();
    let round = 0;
    await fc.assert(
      fc.asyncProperty(entries, async (list) => {
        const dest = join(parent, `out-${round++}`);
        const result = await extractTarGz(await writeBundle(list), dest, limits);
        const sorted = inArchiveOrder(list);
        expect(result.files).toEqual(sorted.map((e) => e.path));
        expect(result.bytes).toBe(list.reduce((sum, e) => sum + e.data.length, 0));
        const onDisk: (string | boolean)[][] = [];
        for (const e of sorted) {
          const mode = (await stat(join(dest, e.path))).mode & 0o777;
          onDisk.push([e.path, sha256(await readFile(join(dest, e.path))), mode === 0o755]);
          expect([0o644, 0o755]).toContain(mode);
        }
        expect(onDisk).toEqual(comparable(sorted));
        // Nothing else: every file on disk is one of the entries.
        const count = async (rel: string): Promise<number> => {
          let n = 0;
          for (const d of await readdir(join(dest, rel), { withFileTypes: true })) {
            n += d.isDirectory() ? await count(rel ? `${rel}/${d.name}` : d.name) : 1;
          }
          return n;
        };
        expect(await count('')).toBe(list.length);
      }),
      { numRuns: 30 },
    );
  });
});
