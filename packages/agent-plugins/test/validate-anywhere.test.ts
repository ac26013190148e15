import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importPlugin, readTarGz, readZip, validatePlugin } from '../src/index.js';
import { folderTree, tarGzOf, zipOf } from './support/archives.js';
import { sandboxesRemovedAfterEach } from './support/read-fixtures.js';
import { PACKAGE_CASES, PLUGIN_100, skillMd } from './support/validate-packages.js';

// Issue 17, "Validation anywhere": "every golden and conformance package in the repo validated
// through the Node folder path, the in-memory tree, the zip and the tar.gz readers gives
// identical findings."

const golden = (spec: string) => fileURLToPath(new URL(`./golden/${spec}/`, import.meta.url));
const sandbox = sandboxesRemovedAfterEach();

/** The verdicts of one package folder through each way in. */
async function verdictsOf(dir: string) {
  const tree = folderTree(dir);
  return {
    folder: await validatePlugin(dir),
    tree: await validatePlugin(tree),
    zip: await validatePlugin(readZip(zipOf(tree))),
    wrappedZip: await validatePlugin(readZip(zipOf(tree, 'acme.tools/'))),
    tarGz: await validatePlugin(await readTarGz(tarGzOf(dir))),
  };
}

describe('one verdict whichever way a package comes in: folder, tree, zip, tar.gz', () => {
  it.each(['1.0.0', '1.1.0'])('the golden %s package', async (spec) => {
    const { folder, ...others } = await verdictsOf(golden(spec));
    expect(folder).toMatchObject({ rejected: false, findings: [] });
    for (const [way, verdict] of Object.entries(others)) expect(verdict, way).toEqual(folder);
  });

  it.each(PACKAGE_CASES.map((c) => [c.name, c] as const))('%s', async (_name, packageCase) => {
    const box = sandbox();
    packageCase.make(box);
    const { folder, ...others } = await verdictsOf(box.root);
    expect(folder.rejected).toBe(packageCase.rejected);
    for (const [way, verdict] of Object.entries(others)) expect(verdict, way).toEqual(folder);
  });
});

/** Cases of reading itself: links that loop or dangle, .git, pipes, a file over the limit. */
const READ_CASES: {
  name: string;
  make: (box: ReturnType<typeof sandbox>) => void | Promise<void>;
  /** Ways that cannot carry the package (a zip holds no pipe). */
  skip?: string[];
  options?: { maxFileBytes: number };
}[] = [
  {
    name: 'links inside, a loop, a dangling link, a link through a file',
    make: (box) => {
      basic(box);
      box.file('docs/guide.md', '# Guide\n');
      box.link('docs/alias.md', 'guide.md');
      box.link('docs/up.md', '../plugin.json');
      box.link('docs/loop-a', 'loop-b');
      box.link('docs/loop-b', 'loop-a');
      box.link('docs/dangling', 'nothing-here');
      box.link('docs/through', 'guide.md/x');
      box.link('skills/alias', 'review');
    },
  },
  {
    name: 'a .git folder and a .GIT file beside the skills',
    make: (box) => {
      basic(box);
      box.file('.git/config', '[core]\n\tfsmonitor = evil\n');
      box.file('skills/review/.GIT', 'gitdir: /elsewhere\n');
    },
  },
  {
    name: 'a pipe where a file was',
    make: (box) => {
      basic(box);
      box.fifo('docs/pipe');
    },
    skip: ['zip', 'wrappedZip'],
  },
  {
    name: 'a file over the per-file limit, and a SKILL.md over it',
    make: (box) => {
      basic(box);
      box.file('docs/big.bin', new Uint8Array(3000).fill(7));
      box.file('skills/large/SKILL.md', `${skillMd('large')}${'x'.repeat(3000)}\n`);
    },
    options: { maxFileBytes: 2048 },
  },
];

function basic(box: ReturnType<typeof sandbox>): void {
  box.file(
    'plugin.json',
    `${JSON.stringify({ $schema: PLUGIN_100, name: 'acme.tools', version: '1.0.0', description: 'd' })}\n`,
  );
  box.file('skills/review/SKILL.md', skillMd('review'));
}

describe('one verdict for what only reading can find: links, .git, pipes, sizes', () => {
  it.each(READ_CASES.map((c) => [c.name, c] as const))('%s', async (_name, readCase) => {
    const box = sandbox();
    await readCase.make(box);
    const options = readCase.options ?? {};
    const tree = folderTree(box.root);
    const folder = await validatePlugin(box.root, options);
    const ways: Record<string, () => Promise<unknown>> = {
      tree: () => validatePlugin(tree, options),
      zip: () => validatePlugin(readZip(zipOf(tree), options), options),
      wrappedZip: () => validatePlugin(readZip(zipOf(tree, 'acme.tools/'), options), options),
      tarGz: async () => validatePlugin(await readTarGz(tarGzOf(box.root), options), options),
    };
    expect(folder.findings.length).toBeGreaterThan(0);
    for (const [way, verdict] of Object.entries(ways))
      if (!readCase.skip?.includes(way)) expect(await verdict(), way).toEqual(folder);
  });
});

describe('importPlugin over a package held in memory', () => {
  it.each(['1.0.0', '1.1.0'])('reports for the golden %s zip what it reports for the folder', async (spec) => {
    const tree = folderTree(golden(spec));
    const fromFolder = await importPlugin(golden(spec));
    expect(fromFolder.rejected).toBe(false);
    expect(await importPlugin(readZip(zipOf(tree)))).toEqual(fromFolder);
    expect(await importPlugin(tree)).toEqual(fromFolder);
  });
});
