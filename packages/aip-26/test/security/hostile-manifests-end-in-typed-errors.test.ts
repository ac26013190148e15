import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPRODUCTIONS, hostileDocument, runBounded } from '@agentproto/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nodeWorkspaceFs } from '../../src/index.js';

// Each case runs in a worker thread with a 256 MiB heap and a time limit: a manifest that
// exhausts memory kills the worker, not the test runner, and is reported as out-of-memory.
const TARGETS = new URL('./support/hostile-manifests.ts', import.meta.url);
const BOUNDS = { maxOldGenerationSizeMb: 256, timeoutMs: 20_000 };
const SEED = Date.now() % 2 ** 31;
// The readers' own refusals of a document that parsed (not a mapping, no front matter) are
// AIP26_WORKSPACE_MANIFEST: typed like the parser's, never a bare Error.
const DOCUMENT_CODES = [
  'DOCUMENT_TOO_LARGE',
  'DOCUMENT_TOO_DEEP',
  'DOCUMENT_TOO_COMPLEX',
  'DOCUMENT_SYNTAX',
  'AIP26_WORKSPACE_MANIFEST',
];

describe('code-workspace manifests: a hostile manifest.yaml or CODE.md ends in a typed error, in a bounded heap and time', () => {
  it('fuzz: deep nesting, long runs of indicators, alias bombs, huge scalars, many keys, other encodings, BOMs and NULs', async () => {
    const cases = fc
      .sample(fc.tuple(fc.constantFrom('manifest.yaml' as const, 'CODE.md' as const), hostileDocument, fc.boolean()), {
        numRuns: 30,
        seed: SEED,
      })
      .map(([file, document, fenced]) => {
        // CODE.md: the document as front matter, closed or not.
        const bytes =
          file === 'CODE.md'
            ? new Uint8Array(
                Buffer.concat([Buffer.from('---\n'), document, Buffer.from(fenced ? '\n---\n# tool\n' : '\n')]),
              )
            : document;
        return { name: `${file} ${bytes.length} bytes (seed ${SEED})`, input: { file, bytes } };
      });
    for (const outcome of await runBounded({ module: TARGETS, exportName: 'readManifest', cases, ...BOUNDS })) {
      expect(['returned', 'threw'], `${outcome.name}: ${JSON.stringify(outcome)}`).toContain(outcome.status);
      if (outcome.status === 'threw') expect(DOCUMENT_CODES, outcome.name).toContain(outcome.error.code);
    }
  }, 600_000);

  it.each([
    ['manifest.yaml of `name: ` and 350,000 `[`', 'manifest.yaml', REPRODUCTIONS.upload, 'DOCUMENT_TOO_LARGE'],
    ['manifest.yaml of `name: ` and 100,000 `[`', 'manifest.yaml', `name: ${'['.repeat(100_000)}`, 'DOCUMENT_TOO_DEEP'],
    [
      'CODE.md front matter of `name: ` and 50,000 `[`',
      'CODE.md',
      `---\n${REPRODUCTIONS.brackets}\n---\n`,
      'DOCUMENT_TOO_LARGE',
    ],
    [
      'CODE.md front matter of `name: ` and 30,000 `{`',
      'CODE.md',
      `---\nname: ${'{'.repeat(30_000)}\n---\n`,
      'DOCUMENT_TOO_DEEP',
    ],
    [
      'manifest.yaml with maps as keys 40 deep',
      'manifest.yaml',
      `kind: code-workspace\nk: ${'{'.repeat(40)}a: 1${'}: 1'.repeat(40)}`,
      'DOCUMENT_SYNTAX',
    ],
  ] as const)('%s is a DocumentError with its code', async (_label, file, text, code) => {
    const [outcome] = await runBounded({
      module: TARGETS,
      exportName: 'readManifest',
      cases: [{ name: file, input: { file, bytes: new TextEncoder().encode(text) } }],
      ...BOUNDS,
    });
    expect(outcome).toMatchObject({ status: 'threw', error: { code } });
  });
});

describe('code-workspace manifests are read no further than the parser may take', () => {
  // Sparse files: 8 GiB that cost no disk, more than a Buffer can hold, so a reader that
  // reads a manifest whole fails (or exhausts memory) where a bounded one refuses or parses.
  const HUGE = 8 * 1024 ** 3;

  it('refuses an 8 GiB manifest.yaml with DOCUMENT_TOO_LARGE after reading one byte past the cap', async () => {
    const root = await mkdtemp(join(tmpdir(), 'huge-manifest-'));
    try {
      await writeFile(join(root, 'manifest.yaml'), 'kind: code-workspace\n');
      await truncate(join(root, 'manifest.yaml'), HUGE);
      const started = performance.now();
      await expect(nodeWorkspaceFs(root).readManifest('')).rejects.toMatchObject({ code: 'DOCUMENT_TOO_LARGE' });
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('reads the front matter of a CODE.md whose body is 8 GiB, and never the body', async () => {
    const root = await mkdtemp(join(tmpdir(), 'huge-code-md-'));
    try {
      await writeFile(join(root, 'CODE.md'), '---\nkind: code-workspace\nlanguage: python\n---\n# a long story\n');
      await truncate(join(root, 'CODE.md'), HUGE);
      expect(await nodeWorkspaceFs(root).readManifest('')).toEqual({ kind: 'code-workspace', language: 'python' });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('refuses front matter that does not close within its cap in a long CODE.md, as too large', async () => {
    const root = await mkdtemp(join(tmpdir(), 'long-code-md-'));
    try {
      await writeFile(join(root, 'CODE.md'), `---\nkind: code-workspace\n${'# filler line\n'.repeat(20_000)}---\n`);
      await expect(nodeWorkspaceFs(root).readManifest('')).rejects.toMatchObject({ code: 'DOCUMENT_TOO_LARGE' });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
