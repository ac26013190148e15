/**
 * The one order in which every deterministic archive of this repository lists its entries
 * (AIP-26 bundles, store layers, plugin layers): the order of GNU tar `--sort=name`, the
 * reproducible-builds convention, so a bundle's listing equals `tar -c --sort=name` of the
 * same tree, entry for entry.
 *
 * GNU tar sorts the names *within each directory* (gnulib savedir, `strcmp`: unsigned bytes,
 * no locale) and writes a folder's whole subtree right after the folder. Over full paths that
 * is a byte comparison in which "/" sorts before every other byte: the segments are compared
 * one by one, and a segment that is a prefix of the other sorts first. So `x/`, `x/a`, then
 * `x-y.txt` and `x.txt` ("-" 0x2D and "." 0x2E are below "/" 0x2F, so a plain byte sort of
 * full paths would put them before `x/`). Case is not folded (`B` before `a`), and names
 * above ASCII sort by their UTF-8 bytes, after every ASCII name.
 *
 * The key is the name's UTF-8 bytes with every "/" replaced by 0x00: a "/" byte never
 * occurs inside a multi-byte UTF-8 sequence (those bytes are all >= 0x80), and an entry name
 * holds no NUL (tar ends names at NUL; every writer refuses it), so 0x00 is free to mean
 * "end of segment". A folder's name may end in "/" (`x/`): its key ends in 0x00 and sorts
 * right before `x/<anything>`.
 */
export function sortInArchiveOrder<T>(items: readonly T[], nameOf: (item: T) => string): T[] {
  const keyed = items.map((item) => ({ key: archiveOrderKey(nameOf(item)), item }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key) || tieBreak(nameOf(a.item), nameOf(b.item)));
  return keyed.map(({ item }) => item);
}

/**
 * The key `sortInArchiveOrder` compares (with `Buffer.compare`): for a writer that takes
 * names one by one and checks they arrive in archive order. Two different names that a
 * writer accepts never have equal keys.
 */
export function archiveOrderKey(name: string): Buffer {
  const key = Buffer.from(name, 'utf8');
  for (let slash = key.indexOf(0x2f); slash !== -1; slash = key.indexOf(0x2f, slash + 1)) key[slash] = 0;
  return key;
}

/**
 * Only two names that differ by "/" against NUL tie on their keys, which no writer accepts;
 * the plain byte order still decides them, so the order is total whatever the input.
 */
function tieBreak(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
