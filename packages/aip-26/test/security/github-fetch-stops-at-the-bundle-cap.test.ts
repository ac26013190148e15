import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitHttpServer, type TempDir, makeRepo, startGitHttpServer, tempDir } from '@agentproto/testkit';
import { systemGitEngine } from '@agentproto/git';
import { defineCodeWithReport } from '../../src/index.js';
import { githubConnector } from '../../src/github/connector.js';
import { makeWorkspace } from '../support/workspace.js';

const MiB = 1024 * 1024;
const repo = 'acme/huge';
let root: TempDir;
let server: GitHttpServer;

beforeAll(async () => {
  root = await tempDir();
  const files: Record<string, string | Buffer> = { 'big/blob.bin': randomBytes(24 * MiB), 'small/a.txt': 'a' };
  for (let i = 0; i < 60; i += 1) files[`wide/f${String(i).padStart(2, '0')}.txt`] = `file ${i}`;
  await makeRepo({ root: root.path, name: `${repo}.git`, commits: [{ files }] });
  server = await startGitHttpServer({ root: root.path });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await root?.cleanup();
});

describe('a github source under the bundle caps', () => {
  // The default connector fetches into its content store (a fill inside the store); with
  // `cache: false` it fetches into a temporary folder. The cap holds, and is reported as
  // the bundle's, either way.
  it.each([
    ['the default store', {}],
    ['cache: false', { cache: false as const }],
  ])(
    'stops fetching a directory past the byte cap while the pack arrives, and refuses with AIP26_BUNDLE_TOO_LARGE (%s)',
    async (_name, caching) => {
      const workspaceRoot = await makeWorkspace({});
      server.resetStats();
      const error = await defineCodeWithReport({
        workspaceRoot,
        github: githubConnector({ baseUrl: server.url, ...caching }),
        limits: { maxBytes: MiB },
        code: { sources: [{ github: { repo, ref: 'main', path: 'big' } }] },
      }).then(
        () => undefined,
        (failure: unknown) => failure as Record<string, unknown>,
      );
      expect(error).toMatchObject({ code: 'AIP26_BUNDLE_TOO_LARGE', limit: 'bytes', max: MiB });
      expect(String(error?.message)).toContain('sources[0]');
      // The 24 MiB blob was not downloaded whole: the transfer stopped near the cap.
      expect(server.stats.bytesServed).toBeLessThan(12 * MiB);
    },
  );

  it('refuses a directory of more files than the bundle may hold from its trees, with AIP26_BUNDLE_TOO_LARGE', async () => {
    const workspaceRoot = await makeWorkspace({});
    await expect(
      defineCodeWithReport({
        workspaceRoot,
        github: githubConnector({ baseUrl: server.url, git: { engine: systemGitEngine() } }),
        limits: { maxFiles: 20 },
        code: { sources: [{ github: { repo, ref: 'main', path: 'wide' } }] },
      }),
    ).rejects.toMatchObject({ code: 'AIP26_BUNDLE_TOO_LARGE', limit: 'files', max: 20 });
  });

  it('bundles a directory within the caps from a repository past them (system git: only its blobs travel)', async () => {
    const workspaceRoot = await makeWorkspace({});
    const { report } = await defineCodeWithReport({
      workspaceRoot,
      github: githubConnector({ baseUrl: server.url, git: { engine: systemGitEngine() } }),
      limits: { maxFiles: 60, maxBytes: 1000 },
      code: { sources: [{ github: { repo, ref: 'main', path: 'wide' } }] },
    });
    expect(report.files).toBe(60);
  });
});
