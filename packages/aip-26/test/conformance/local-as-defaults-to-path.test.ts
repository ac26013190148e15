import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { openContentStore } from '@agentproto/content-cache';
import { type GitHttpServer, type TempDir, makeRepo, startGitHttpServer, tempDir } from '@agentproto/testkit';
import { type Code, assertRunFileInBundle, defineCodeWithReport, githubConnector, readTarGz } from '../../src/index.js';
import { makeWorkspace } from '../support/workspace.js';

// aip-26.md §"Source variant: `local`": "`as` | string | no | Bundle-internal target.
// Default = same as `path`." EXAMPLES.md 6 comments `- local: { path:
// shared/finance/package.json }  # overrides shell's package.json`, which would need `as` to
// default to the file's name. The SDK follows the table (README, "Choices"): without `as`
// the file lands at shared/finance/package.json and the shell's package.json stays; with
// `as: package.json` it overrides it.
function financeToolsExample(): { code: Code } {
  const text = readFileSync(new URL('../fixtures/spec/EXAMPLES.md', import.meta.url), 'utf8');
  const block = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map(([, body]) => body!)
    .find((body) => body.startsWith('# .code-workspaces/finance-tools/manifest.yaml'));
  // As published, its runner block is not YAML (`npm: [… @anthropic-ai/sdk@…]`); only `code` is needed.
  return parseYaml(block!.replace(/^runner:\n(?:[ #].*\n|\n)*/m, '')) as { code: Code };
}

let root: TempDir;
let server: GitHttpServer;
let store: TempDir;

beforeAll(async () => {
  root = await tempDir();
  store = await tempDir();
  // A stand-in for mycompany/mastra-tool-shell at tag v2.0.1, served by git http-backend on 127.0.0.1.
  await makeRepo({
    root: root.path,
    name: 'mycompany/mastra-tool-shell.git',
    commits: [
      {
        message: 'shell',
        files: {
          'package.json': '{"name":"shell"}\n',
          'lib/base.ts': 'base\n',
          'reports/quarterly.ts': 'export default 1\n',
        },
      },
    ],
    tags: [{ name: 'v2.0.1', target: 0, annotated: true, message: 'v2.0.1' }],
  });
  server = await startGitHttpServer({ root: root.path });
});

afterAll(async () => {
  await server?.close();
  await root?.cleanup();
  await store?.cleanup();
});

async function bundleOf(code: Code): Promise<Map<string, string>> {
  const workspaceRoot = await makeWorkspace({
    '.code-workspaces/finance-tools/manifest.yaml': JSON.stringify({
      kind: 'code-workspace',
      name: 'finance-tools',
      code,
    }),
    'shared/finance/lib/ledger.ts': 'ledger\n',
    'shared/finance/package.json': '{"name":"finance"}\n',
  });
  const github = githubConnector({ baseUrl: server.url, cache: await openContentStore({ root: store.path }) });
  // The quarterly-report tool of the example: `code: <the workspace>`, `run: reports/quarterly.ts`.
  const { bundle } = await defineCodeWithReport({
    workspaceRoot,
    github,
    code: './.code-workspaces/finance-tools',
    run: 'reports/quarterly.ts',
  });
  const files = await readTarGz(bundle, { maxBytes: 1 << 20, maxFiles: 100 });
  return new Map([...files].map(([path, data]) => [path, data.toString()]));
}

describe('aip-26.md "local … `as` … Default = same as `path`", applied to EXAMPLES.md 6 (finance-tools)', () => {
  it("as written, shared/finance/package.json lands at its own path: the shell's package.json is not overridden", async () => {
    const { code } = financeToolsExample();
    const files = await bundleOf(code);
    expect([...files.keys()].sort()).toEqual([
      'config/region.ts',
      'lib/base.ts',
      'package.json',
      'reports/quarterly.ts',
      'shared/finance/lib/ledger.ts',
      'shared/finance/package.json',
    ]);
    expect(files.get('package.json')).toBe('{"name":"shell"}\n');
    expect(files.get('shared/finance/package.json')).toBe('{"name":"finance"}\n');
    expect(assertRunFileInBundle('reports/quarterly.ts', files.keys())).toBe('reports/quarterly.ts');
  });

  it("with `as`, the same sources override the shell's package.json and join its lib/", async () => {
    const { code } = financeToolsExample();
    const sources = (code as { sources: Record<string, unknown>[] }).sources.map((source) => {
      const local = source.local as { path: string } | undefined;
      if (local?.path === 'shared/finance/package.json') return { local: { ...local, as: 'package.json' } };
      if (local?.path === 'shared/finance/lib/') return { local: { ...local, as: 'lib/' } };
      return source;
    });
    const files = await bundleOf({ sources } as Code);
    expect([...files.keys()].sort()).toEqual([
      'config/region.ts',
      'lib/base.ts',
      'lib/ledger.ts',
      'package.json',
      'reports/quarterly.ts',
    ]);
    expect(files.get('package.json')).toBe('{"name":"finance"}\n');
  });
});
