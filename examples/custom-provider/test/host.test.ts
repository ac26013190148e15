import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { pinOf, skillPack, tarGz } from './support/archive.js';
import { startArchiveServer } from './support/server.js';
import { tempDir } from './support/temp.js';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const PACKAGE = '@agentproto/example-custom-provider';
const TOKEN = `canary-host-${randomBytes(12).toString('hex')}`;

/**
 * Runs the host program from the package folder, as its usage line says: that folder is
 * the deployment's, where the provider package is found by its name.
 */
async function host(args: string[], env: Record<string, string>) {
  const argv = ['--conditions=@agentproto/source', '--import', 'tsx', 'src/host.ts', ...args];
  // The approvals come from the test alone, whatever the environment running it holds; and
  // without the NODE_PATH a package manager's shim sets, the package is found only where a
  // deployment would have installed it.
  const { NODE_PATH: _, ...inherited } = process.env;
  const environment = { ...inherited, TARBALL_TOKEN_SECRET_NAMES: '', ...env };
  return run(process.execPath, argv, { cwd: packageDir, env: environment, timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );
}

async function declarationFile(entries: unknown[]): Promise<{ file: string; store: string }> {
  const work = await tempDir();
  const file = join(work, 'declaration.json');
  await writeFile(file, JSON.stringify(entries));
  return { file, store: join(work, 'store') };
}

describe('the host program', () => {
  it("loads the tarball provider by package name, prepares the declaration and prints each skill's directory; the token stays out of its output", async () => {
    const server = await startArchiveServer();
    const archive = await tarGz(skillPack());
    const url = server.serve('/pack-1.2.0.tar.gz', { body: archive, token: TOKEN });
    const { file, store } = await declarationFile([
      {
        provider: 'tarball',
        source: url,
        version: pinOf(archive),
        path: 'skills/review',
        name: 'review',
        config: { token_secret_name: 'ACME_SKILLS_TOKEN' },
      },
    ]);
    const args = [file, '--provider-package', PACKAGE, '--store', store];
    const deployment = { TARBALL_TOKEN_SECRET_NAMES: 'ACME_SKILLS_TOKEN', ACME_SKILLS_TOKEN: TOKEN };

    const first = await host(args, deployment);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    const [name, dir, how] = first.stdout.trim().split('\t');
    expect([name, how]).toEqual(['review', 'fetched']);
    expect(dir!.startsWith(store)).toBe(true);
    expect(await readFile(join(dir!, 'SKILL.md'), 'utf8')).toContain('# Review');

    const second = await host(args, deployment);
    expect(second.stdout.trim()).toBe(`review\t${dir}\thit`);

    const refused = await host(args, { ...deployment, ACME_SKILLS_TOKEN: `${TOKEN}-revoked` });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('SKILL_AUTH_FAILED');
    for (const output of [first, second, refused]) expect(output.stdout + output.stderr).not.toContain(TOKEN);
    expect([server.count('HEAD'), server.count('GET')]).toEqual([3, 1]);
  });

  it('refuses a token secret name the deployment did not approve in TARBALL_TOKEN_SECRET_NAMES, before any request', async () => {
    const server = await startArchiveServer();
    const entry = {
      provider: 'tarball',
      source: `${server.origin}/pack.tar.gz`,
      version: `sha256:${'a'.repeat(64)}`,
      name: 'review',
      config: { token_secret_name: 'ACME_SKILLS_TOKEN' },
    };
    const { file, store } = await declarationFile([entry]);
    for (const approved of ['', 'OTHER_TOKEN, acme-skills-token']) {
      const result = await host([file, '--provider-package', PACKAGE, '--store', store], {
        TARBALL_TOKEN_SECRET_NAMES: approved,
        ACME_SKILLS_TOKEN: TOKEN,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('SKILL_CREDENTIAL_NOT_APPROVED');
      expect(result.stderr).toContain('TARBALL_TOKEN_SECRET_NAMES');
    }
    expect(server.requests).toEqual([]);
  });

  it.each([
    [
      'a package name that is not installed',
      ['--provider-package', '@agentproto/example-custom-providr'],
      'SKILL_PROVIDER_INVALID: cannot register skill provider "@agentproto/example-custom-providr": the package cannot be loaded (no package "@agentproto/example-custom-providr" is installed in',
    ],
    [
      'a package that exports no providers',
      ['--provider-package', '@agentproto/content-cache'],
      'SKILL_PROVIDER_INVALID: cannot register skill provider "@agentproto/content-cache": the package exports no `providers` array',
    ],
  ])('fails on %s, naming it and the providers known without it, before any request', async (_, flags, message) => {
    const server = await startArchiveServer();
    const { file, store } = await declarationFile([
      {
        provider: 'tarball',
        source: `${server.origin}/pack.tar.gz`,
        version: `sha256:${'a'.repeat(64)}`,
        name: 'review',
      },
    ]);
    const result = await host([file, ...flags, '--store', store], {});
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('the providers known without it: git');
    expect(server.requests).toEqual([]);
  });

  it('without the package, a tarball entry names an unknown provider and the known ids', async () => {
    const server = await startArchiveServer();
    const { file, store } = await declarationFile([
      {
        provider: 'tarball',
        source: `${server.origin}/pack.tar.gz`,
        version: `sha256:${'a'.repeat(64)}`,
        name: 'review',
      },
    ]);
    const result = await host([file, '--store', store], {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('SKILL_PROVIDER_UNKNOWN');
    expect(result.stderr).toContain('unknown skill provider "tarball"; known providers: git');
    expect(server.requests).toEqual([]);
  });
});
