import { REPRODUCTIONS, hostileDocument, runBounded } from '@agentproto/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

// Each case runs in a worker thread with a 256 MiB heap and a time limit: a manifest that
// exhausts memory kills the worker, not the test runner, and is reported as out-of-memory.
const TARGETS = new URL('./support/hostile-manifests.ts', import.meta.url);
const BOUNDS = { maxOldGenerationSizeMb: 256, timeoutMs: 20_000 };
const SEED = Date.now() % 2 ** 31;
const DOCUMENT_CODES = ['DOCUMENT_TOO_LARGE', 'DOCUMENT_TOO_DEEP', 'DOCUMENT_TOO_COMPLEX', 'DOCUMENT_SYNTAX'];
/** The readers' own refusals of a document that parsed: not a mapping, no front matter. */
const SHAPE_REFUSAL = /is not a mapping|has no front matter/;

describe('code-workspace manifests: a hostile manifest.yaml or CODE.md ends in a typed error, in a bounded heap and time', () => {
  it('fuzz: deep nesting, long runs of indicators, alias bombs, huge scalars, many keys, other encodings, BOMs and NULs', async () => {
    const cases = fc
      .sample(fc.tuple(fc.constantFrom('manifest.yaml' as const, 'CODE.md' as const), hostileDocument, fc.boolean()), { numRuns: 30, seed: SEED })
      .map(([file, document, fenced]) => {
        // CODE.md: the document as front matter, closed or not.
        const bytes = file === 'CODE.md' ? new Uint8Array(Buffer.concat([Buffer.from('---\n'), document, Buffer.from(fenced ? '\n---\n# tool\n' : '\n')])) : document;
        return { name: `${file} ${bytes.length} bytes (seed ${SEED})`, input: { file, bytes } };
      });
    for (const outcome of await runBounded({ module: TARGETS, exportName: 'readManifest', cases, ...BOUNDS })) {
      expect(['returned', 'threw'], `${outcome.name}: ${JSON.stringify(outcome)}`).toContain(outcome.status);
      if (outcome.status === 'threw' && outcome.error.code === undefined) expect(outcome.error.message, outcome.name).toMatch(SHAPE_REFUSAL);
      if (outcome.status === 'threw' && outcome.error.code !== undefined) expect(DOCUMENT_CODES, outcome.name).toContain(outcome.error.code);
    }
  }, 600_000);

  it.each([
    ['manifest.yaml of `name: ` and 350,000 `[`', 'manifest.yaml', REPRODUCTIONS.upload, 'DOCUMENT_TOO_LARGE'],
    ['manifest.yaml of `name: ` and 100,000 `[`', 'manifest.yaml', `name: ${'['.repeat(100_000)}`, 'DOCUMENT_TOO_DEEP'],
    ['CODE.md front matter of `name: ` and 50,000 `[`', 'CODE.md', `---\n${REPRODUCTIONS.brackets}\n---\n`, 'DOCUMENT_TOO_LARGE'],
    ['CODE.md front matter of `name: ` and 30,000 `{`', 'CODE.md', `---\nname: ${'{'.repeat(30_000)}\n---\n`, 'DOCUMENT_TOO_DEEP'],
    ['manifest.yaml with maps as keys 40 deep', 'manifest.yaml', `kind: code-workspace\nk: ${'{'.repeat(40)}a: 1${'}: 1'.repeat(40)}`, 'DOCUMENT_SYNTAX'],
  ] as const)('%s is a DocumentError with its code', async (_label, file, text, code) => {
    const [outcome] = await runBounded({ module: TARGETS, exportName: 'readManifest', cases: [{ name: file, input: { file, bytes: new TextEncoder().encode(text) } }], ...BOUNDS });
    expect(outcome).toMatchObject({ status: 'threw', error: { code } });
  });
});
