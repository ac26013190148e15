import { execFileSync } from 'node:child_process';
import { extract } from 'tar-stream';

/** An archive entry as a listing shows it: its name and its type (`file`, `directory`, `symlink`, …). */
export type TarListed = [name: string, type: string];

/**
 * Every entry of an uncompressed tar, in archive order. tar-stream reads GNU long names and
 * pax headers, so the listing is independent of the SDK's own tar reader.
 */
export async function tarListing(tar: Buffer): Promise<TarListed[]> {
  const listed: TarListed[] = [];
  const parser = extract();
  const done = new Promise<void>((resolve, reject) => {
    parser.on('entry', (header, stream, next) => {
      listed.push([header.name, header.type ?? 'file']);
      stream.on('end', next);
      stream.resume();
    });
    parser.on('finish', resolve);
    parser.on('error', reject);
  });
  parser.end(tar);
  await done;
  return listed;
}

/**
 * What GNU tar lists for a tree: `tar -c --sort=name -C root .`, with "./" dropped from every
 * name and the root's own entry left out (an archive of the SDK has no root entry). The locale
 * is pinned (default `C`): GNU tar compares names with strcmp (gnulib savedir), not strcoll,
 * so any locale gives the same listing.
 */
export async function gnuTarSortNameListing(root: string, locale = 'C'): Promise<TarListed[]> {
  const tar = execFileSync('tar', ['-c', '--sort=name', '-C', root, '.'], {
    env: { ...process.env, LC_ALL: locale },
    maxBuffer: 64 << 20,
  });
  return (await tarListing(tar))
    .filter(([name]) => name !== './')
    .map(([name, type]): TarListed => [name.replace(/^\.\//, ''), type]);
}
