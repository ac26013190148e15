import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type GitHttpServer, type TempDir, makeRepo, startGitHttpServer, tempDir } from '@agentproto/testkit';
import {
  type Code,
  type RunValue,
  assertRunFileInBundle,
  defineCodeWithReport,
  githubConnector,
  readTarGz,
  resolveRun,
} from '../src/index.js';
import { makeWorkspace } from './support/workspace.js';

/**
 * Every YAML block of the spec's EXAMPLES.md, with the file path its first comment names.
 * One block as published is not valid YAML (`npm: [stripe@^11.0.0, @anthropic-ai/sdk@…]`:
 * a plain scalar cannot start with `@`); its `runner` block is dropped, the rest is read.
 */
function exampleBlocks(): { file: string | undefined; manifest: Record<string, unknown>; repaired: boolean }[] {
  const text = readFileSync(new URL('./fixtures/spec/EXAMPLES.md', import.meta.url), 'utf8');
  return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map(([, body]) => {
    const file = /^# (\S+\/manifest\.yaml)/.exec(body!)?.[1];
    try {
      return { file, manifest: parseYaml(body!) as Record<string, unknown>, repaired: false };
    } catch {
      const withoutRunner = body!.replace(/^runner:\n(?:[ #].*\n|\n)*/m, '');
      return { file, manifest: parseYaml(withoutRunner) as Record<string, unknown>, repaired: true };
    }
  });
}

// Local stand-ins for the repositories the examples name, served by git http-backend on
// 127.0.0.1. A commit id cannot be chosen, so example 3's pinned SHA is mapped to the
// stand-in's commit; the tags are real tags of the stand-ins.
let root: TempDir;
let server: GitHttpServer;
const commitFor = new Map<string, string>();

beforeAll(async () => {
  root = await tempDir();
  const shell = await makeRepo({
    root: root.path,
    name: 'mycompany/mastra-tool-shell.git',
    commits: [
      {
        message: 'shell',
        files: {
          'package.json': '{"name":"shell"}\n',
          'lib/base.ts': 'export const baseTool = (t: unknown) => t\n',
          'reports/quarterly.ts': 'export default 1\n',
        },
      },
    ],
    tags: [{ name: 'v2.0.1', target: 0, annotated: true, message: 'v2.0.1' }],
  });
  commitFor.set('4f3a2b1ca73b5e9f8d2c1a0b3e6f7d4c8b1a2e3f', shell.commits[0]!);
  await makeRepo({
    root: root.path,
    name: 'mycompany/render-utils.git',
    commits: [
      {
        message: 'utils',
        files: {
          'invoice.ts': 'export default "invoice"\n',
          'receipt.ts': 'export default "receipt"\n',
          'package.json': '{}\n',
        },
      },
    ],
    tags: [{ name: 'v1.4.0', target: 0 }],
  });
  server = await startGitHttpServer({ root: root.path });
});

afterAll(async () => {
  await server?.close();
  await root?.cleanup();
});

/** The example's code block, with stand-in commit ids for the pinned SHAs it names. */
function standIn(code: unknown): Code {
  return JSON.parse(JSON.stringify(code), (key, value: unknown) =>
    key === 'ref' && typeof value === 'string' ? (commitFor.get(value) ?? value) : value,
  ) as Code;
}

describe('the manifests of EXAMPLES.md', () => {
  const blocks = exampleBlocks();
  const workspaces = blocks.filter((b) => b.manifest.kind === 'code-workspace');
  const tools = blocks.filter((b) => b.manifest.kind !== 'code-workspace' && b.manifest.code !== undefined);

  it('has the six worked examples: the tools and workflows and two code-workspaces', () => {
    expect(tools.map((t) => t.manifest.name)).toEqual([
      'render-pdf',
      'scrape-prices-csv',
      'fetch-customer-orders',
      'render-invoice',
      'render-receipt',
      'send-templated-email',
      'quarterly-report',
    ]);
    expect(blocks.filter((b) => b.repaired).map((b) => b.manifest.name)).toEqual(['finance-tools']);
    expect(workspaces.map((w) => w.file)).toEqual([
      '.code-workspaces/render-utils/manifest.yaml',
      '.code-workspaces/finance-tools/manifest.yaml',
    ]);
  });

  it.each(tools.map((t) => [t.manifest.name as string, t.manifest] as const))(
    'materializes %s and finds its run entry in the bundle',
    async (_name, manifest) => {
      const files: Record<string, string> = {
        'package-lock.json': '{}\n',
        'shared/lib/render-mustache.ts': 'export const render = 1\n',
        'shared/email-templates/welcome.html': '<p>hi</p>\n',
        'shared/email-templates/readme.md': 'not html\n',
        'shared/finance/lib/ledger.ts': 'export const ledger = 1\n',
        'shared/finance/package.json': '{"name":"finance"}\n',
      };
      // The code-workspace manifests live where their comment says; the tools refer to them
      // without the leading dot, so the stand-in workspace has them at both places.
      for (const { file, manifest: workspace } of workspaces) {
        const text = JSON.stringify({ ...workspace, code: standIn(workspace.code) });
        files[file!] = text;
        files[file!.replace(/^\./, '')] = text;
      }
      const workspaceRoot = await makeWorkspace(files);
      const github = githubConnector({ baseUrl: server.url });
      const { bundle, report } = await defineCodeWithReport({ workspaceRoot, github, code: standIn(manifest.code) });
      const bundled = [...(await readTarGz(bundle, { maxBytes: 1 << 24, maxFiles: 1000 })).keys()];
      expect(report.files).toBe(bundled.length);
      for (const source of report.sources.filter((s) => s.kind === 'github'))
        expect(source.commit).toMatch(/^[0-9a-f]{40}$/);
      const run = manifest.run as RunValue;
      const resolved = resolveRun(run, '/bundle');
      expect(resolved.cwd).toBe('/bundle');
      if (resolved.form === 'file') expect(assertRunFileInBundle(run, bundled)).toBe(resolved.file);
      else expect(resolved.cmd).toBeTruthy();
    },
  );
});
