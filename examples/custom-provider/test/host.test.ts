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
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const TOKEN = `canary-host-${randomBytes(12).toString('hex')}`;

/** Runs the host program from the repository root, as its usage line says. */
async function host(args: string[], env: Record<string, string>) {
  const argv = ['--conditions=@agentproto/source', '--import', 'tsx', 'examples/custom-provider/src/host.ts', ...args];
  return run(process.execPath, argv, { cwd: repoRoot, env: { ...process.env, ...env }, timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? -1, stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
  );
}

describe('the host program', () => {
  it('prepares a declaration into the store and prints each skill\'s directory; the token stays out of its output', async () => {
    const server = await startArchiveServer();
    const archive = await tarGz(skillPack());
    const url = server.serve('/pack-1.2.0.tar.gz', { body: archive, token: TOKEN });
    const work = await tempDir();
    const declaration = join(work, 'declaration.json');
    await writeFile(
      declaration,
      JSON.stringify([{ provider: 'tarball', source: url, version: pinOf(archive), path: 'skills/review', name: 'review', config: { token_secret_name: 'ACME_SKILLS_TOKEN' } }]),
    );
    const args = [declaration, '--cache', join(work, 'store'), '--token-secret-name', 'ACME_SKILLS_TOKEN'];

    const first = await host(args, { ACME_SKILLS_TOKEN: TOKEN });
    expect(first).toMatchObject({ code: 0, stderr: '' });
    const [name, dir, how] = first.stdout.trim().split('\t');
    expect([name, how]).toEqual(['review', 'fetched']);
    expect(dir!.startsWith(join(work, 'store'))).toBe(true);
    expect(await readFile(join(dir!, 'SKILL.md'), 'utf8')).toContain('# Review');

    const second = await host(args, { ACME_SKILLS_TOKEN: TOKEN });
    expect(second.stdout.trim()).toBe(`review\t${dir}\thit`);

    const refused = await host(args, { ACME_SKILLS_TOKEN: `${TOKEN}-revoked` });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('SKILL_AUTH_FAILED');
    for (const output of [first, second, refused]) expect(output.stdout + output.stderr).not.toContain(TOKEN);
    expect([server.count('HEAD'), server.count('GET')]).toEqual([3, 1]);
  });

  it('refuses a token secret name the host did not approve, before any request', async () => {
    const server = await startArchiveServer();
    const work = await tempDir();
    const declaration = join(work, 'declaration.json');
    const entry = { provider: 'tarball', source: `${server.origin}/pack.tar.gz`, version: `sha256:${'a'.repeat(64)}`, name: 'review', config: { token_secret_name: 'ACME_SKILLS_TOKEN' } };
    await writeFile(declaration, JSON.stringify([entry]));
    const result = await host([declaration, '--cache', join(work, 'store')], { ACME_SKILLS_TOKEN: TOKEN });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('SKILL_CREDENTIAL_NOT_APPROVED');
    expect(server.requests).toEqual([]);
  });
});
