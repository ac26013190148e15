import { describe, expect, it } from 'vitest';
import { openContentStore } from '@agentproto/content-cache';
import { tempDir } from '@agentproto/testkit';
import {
  type Code,
  ManifestValidationError,
  RunFileMissingError,
  RunResolutionError,
  type RunValue,
  defineCodeWithReport,
  inheritBlocks,
  nodeWorkspaceFs,
  planCode,
  resolveRun,
  scanCode,
} from '../../src/index.js';
import { makeWorkspace } from '../support/workspace.js';

// ADAPTER.md, "Error surface": "`ManifestValidationError` — `code` block fails schema", and
// "All three MUST surface BEFORE the runner is provisioned". A host that plans first (to
// fold the inherited blocks, as ADAPTER.md's "Inheritance semantics" asks) must get that
// typed refusal from planCode too, never a TypeError from a field that is not there.
const MALFORMED_CODE: unknown[] = [
  null,
  42,
  {},
  { sources: null },
  { sources: [42] },
  { sources: [null] },
  { sources: [{}] },
  { sources: [{ local: {} }] },
  { sources: [{ local: { path: 7 } }] },
  { sources: [{ inline: { path: 'a.js' } }] },
  { sources: [{ github: {} }] },
  { sources: [{ github: { repo: 'o/r' } }] },
  { sources: [{ ref: {} }] },
  { sources: [{ ref: 5 }] },
  { sources: [{ local: 'a', inline: { path: 'b', content: '' } }] },
];

describe('ADAPTER.md "Error surface": a malformed code block is ManifestValidationError from every entry point', () => {
  it.each(MALFORMED_CODE.map((code) => [JSON.stringify(code), code] as const))(
    'planCode(%s) → AIP26_MANIFEST_INVALID',
    async (_shown, code) => {
      const workspaceRoot = await makeWorkspace({});
      const error = await planCode(code as Code, nodeWorkspaceFs(workspaceRoot)).catch((e: unknown) => e);
      expect(error, String(error)).toBeInstanceOf(ManifestValidationError);
      expect(error).toMatchObject({ code: 'AIP26_MANIFEST_INVALID' });
    },
  );

  it('the order a host uses (plan, inherit, resolveRun, build) refuses a malformed block with a typed error at the first step', async () => {
    const workspaceRoot = await makeWorkspace({});
    const manifest = { code: { sources: [{ local: {} }] }, run: 'tool.js' };
    await expect(
      planCode(manifest.code as unknown as Code, nodeWorkspaceFs(workspaceRoot)).then(({ workspaces }) =>
        inheritBlocks(manifest, workspaces),
      ),
    ).rejects.toBeInstanceOf(ManifestValidationError);
    expect(() => resolveRun({ file: 7 } as unknown as RunValue, '/bundle')).toThrow(RunResolutionError);
    await expect(
      defineCodeWithReport({ workspaceRoot, code: manifest.code as unknown as Code, run: 'tool.js' }),
    ).rejects.toBeInstanceOf(ManifestValidationError);
  });
});

// ADAPTER.md, "File path form": "`run: tool.ts` … `<bundle>/<run>`" (the run file is
// bundle-internal, aip-26.md §"Path semantics"), and EXAMPLES.md 6: "`run:
// reports/quarterly.ts` resolves inside the merged tarball". With `run`, scanCode and
// defineCode refuse a run file the merged bundle does not hold, with the runner's refusal.
describe('EXAMPLES.md 6 "run … resolves inside the merged tarball": scan and bundle refuse a run file the bundle lacks', () => {
  const code: Code = { sources: [{ inline: { path: 'tool.ts', content: 'export {}' } }, { local: 'lib/' }] };

  it('scanCode and defineCodeWithReport: RunFileMissingError naming the file, and the case twin', async () => {
    const workspaceRoot = await makeWorkspace({ 'lib/a.ts': 'a' });
    for (const call of [
      () => scanCode({ workspaceRoot, code, run: 'Tool.ts' }),
      () => defineCodeWithReport({ workspaceRoot, code, run: { file: 'Tool.ts' } }),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error, String(error)).toBeInstanceOf(RunFileMissingError);
      expect(error).toMatchObject({ code: 'AIP26_RUN_FILE_MISSING', file: 'Tool.ts', didYouMean: 'tool.ts' });
      expect((error as Error).message).toContain('"Tool.ts"');
    }
  });

  it('a run file that is in the bundle, or a run in exec or shell form, passes', async () => {
    const workspaceRoot = await makeWorkspace({ 'lib/a.ts': 'a' });
    await expect(scanCode({ workspaceRoot, code, run: 'lib/a.ts' })).resolves.toMatchObject({ files: 2 });
    await expect(defineCodeWithReport({ workspaceRoot, code, run: './tool.ts --fast' })).resolves.toMatchObject({
      report: { files: 2 },
    });
    await expect(scanCode({ workspaceRoot, code, run: ['node', 'missing.js'] })).resolves.toMatchObject({ files: 2 });
  });

  it('a bad run block is refused before any source is read', async () => {
    // The local source does not exist: the run block is what is refused.
    const workspaceRoot = await makeWorkspace({});
    await expect(scanCode({ workspaceRoot, code, run: [] as unknown as RunValue })).rejects.toBeInstanceOf(
      RunResolutionError,
    );
  });

  it('a pinned bundle read back from the store is checked too', async () => {
    const workspaceRoot = await makeWorkspace({});
    const store = await tempDir();
    try {
      const cache = await openContentStore({ root: store.path });
      const pinned: Code = { sources: [{ inline: { path: 'tool.ts', content: 'export {}' } }] };
      await expect(defineCodeWithReport({ workspaceRoot, code: pinned, cache, run: 'tool.ts' })).resolves.toMatchObject(
        { report: { files: 1 } },
      );
      // Built and stored above: this time the bundle comes from the store.
      await expect(defineCodeWithReport({ workspaceRoot, code: pinned, cache, run: 'other.ts' })).rejects.toMatchObject(
        { code: 'AIP26_RUN_FILE_MISSING', file: 'other.ts' },
      );
      await expect(defineCodeWithReport({ workspaceRoot, code: pinned, cache, run: 'tool.ts' })).resolves.toMatchObject(
        { report: { files: 1 } },
      );
    } finally {
      await store.cleanup();
    }
  });
});
