import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeWorkspaceFs } from '../src/index.js';

describe("a code-workspace manifest's syntax error names the file and its line in that file", () => {
  it("CODE.md: the front matter starts on line 2, so an error on the file's line 3 says line 3", async () => {
    const root = await mkdtemp(join(tmpdir(), 'code-md-position-'));
    try {
      await writeFile(join(root, 'CODE.md'), '---\nkind: code-workspace\nlanguage: [python\n---\n# tool\n');
      const error = await nodeWorkspaceFs(root)
        .readManifest('')
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'DOCUMENT_SYNTAX', source: 'CODE.md' });
      // The unclosed flow sequence is reported at the end of its line, the file's third.
      expect(error).toMatchObject({ line: 3, column: 18 });
      expect((error as { excerpt: string }).excerpt).toContain('3 | language: [python');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('manifest.yaml: lines count from the first line of the file', async () => {
    const root = await mkdtemp(join(tmpdir(), 'manifest-position-'));
    try {
      await writeFile(join(root, 'manifest.yaml'), 'kind: code-workspace\nlanguage: "python\n');
      const error = await nodeWorkspaceFs(root)
        .readManifest('')
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'DOCUMENT_SYNTAX', source: 'manifest.yaml', line: 2 });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
