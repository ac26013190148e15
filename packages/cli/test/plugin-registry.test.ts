import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { OciClient } from '@agentproto/oci';
import { type OciRegistry, startOciRegistry } from '@agentproto/testkit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { run, runJson } from './support/run.js';
import { scratchFolders } from './support/scratch.js';

const scratch = scratchFolders();

const SKILL = (name: string) => `---\nname: ${name}\ndescription: Does ${name}.\n---\n# ${name}\n`;

const CONFIG = `[plugin]
name = "acme.tools"
version = "1.2.0"
description = "Acme review tooling."
include = ["bin/**"]

[[plugin.mcp]]
name = "local"
command = "./bin/server"
args = ["serve"]
`;

let registry: OciRegistry;
beforeAll(async () => {
  registry = await startOciRegistry();
});
afterAll(async () => {
  await registry?.close();
});

const ENV = ['AGENTPROTO_REGISTRY_USERNAME', 'AGENTPROTO_REGISTRY_PASSWORD', 'AGENTPROTO_REGISTRY_TOKEN'];
beforeEach(() => {
  // Whatever the shell running the tests holds, these tests start without registry credentials.
  for (const name of ENV) vi.stubEnv(name, '');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

let repositories = 0;
const reference = (tag = 'v1') => `${registry.host}/plugins/cli${++repositories}:${tag}`;

/** `plugin build` of a small project: one skill, an executable bundled server. Returns the package folder. */
async function builtPackage(): Promise<string> {
  const root = await scratch();
  const files: Record<string, string> = {
    'plugin.toml': CONFIG,
    'skills/review/SKILL.md': SKILL('review'),
    'bin/server': '#!/bin/sh\necho serve\n',
  };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  await chmod(join(root, 'bin/server'), 0o755);
  const out = join(root, 'dist');
  expect((await run(['plugin', 'build', join(root, 'plugin.toml'), '--out', out])).code).toBe(0);
  return out;
}

/** Every regular file below `dir`: bytes and permission bits. */
async function tree(dir: string): Promise<Map<string, { bytes: Buffer; mode: number }>> {
  const files = new Map<string, { bytes: Buffer; mode: number }>();
  const walk = async (rel: string): Promise<void> => {
    for (const name of (await readdir(join(dir, rel))).sort()) {
      const path = rel === '' ? name : `${rel}/${name}`;
      const info = await lstat(join(dir, path));
      if (info.isDirectory()) await walk(path);
      else files.set(path, { bytes: await readFile(join(dir, path)), mode: info.mode & 0o777 });
    }
  };
  await walk('');
  return files;
}

describe('agentproto plugin push and pull', () => {
  it('push then pull gives the built package back, byte for byte and mode for mode, without the sidecar', async () => {
    const pkg = await builtPackage();
    const ref = reference();
    const pushed = await runJson<{ pushed: boolean; ref: string; digest: string; pinned: string; files: string[] }>([
      'plugin',
      'push',
      pkg,
      ref,
      '--insecure-http',
    ]);
    expect(pushed).toMatchObject({ pushed: true, ref });
    expect(pushed.files).toEqual(['bin/server', 'mcp.json', 'plugin.json', 'skills/review/SKILL.md']);

    const dir = join(await scratch(), 'pulled');
    const pulled = await runJson<{
      pulled: boolean;
      dir: string;
      digest: string;
      validation: { rejected: boolean; findings: unknown[] };
    }>(['plugin', 'pull', ref, dir, '--insecure-http']);
    expect(pulled).toMatchObject({
      pulled: true,
      dir,
      digest: pushed.digest,
      validation: { rejected: false, findings: [] },
    });

    const expected = await tree(pkg);
    expect(expected.delete('.agentproto-generated.json')).toBe(true);
    expect(await tree(dir)).toEqual(expected);
    expect((await tree(dir)).get('bin/server')?.mode).toBe(0o755);

    // The pinned reference pulls the same artifact.
    const again = join(await scratch(), 'again');
    expect(
      (await runJson<{ digest: string }>(['plugin', 'pull', pushed.pinned, again, '--insecure-http'])).digest,
    ).toBe(pushed.digest);
  });

  it('prints the reference, the digest and the pinned reference', async () => {
    const pkg = await builtPackage();
    const ref = reference();
    const push = await run(['plugin', 'push', pkg, ref, '--insecure-http']);
    expect(push.code).toBe(0);
    expect(push.stderr).toBe('');
    const digest = /^digest (sha256:[0-9a-f]{64})$/m.exec(push.stdout)?.[1];
    expect(push.stdout).toBe(
      `pushed ${ref}: 4 files, Agent Plugins 1.0.0\ndigest ${digest}\npinned ${ref.replace(/:v1$/, '')}@${digest}\n`,
    );

    const dir = join(await scratch(), 'pulled');
    const pull = await run(['plugin', 'pull', ref, dir, '--insecure-http']);
    expect(pull).toEqual({
      code: 0,
      stdout: `${dir}: ${ref}, 4 files, Agent Plugins 1.0.0, 1 skill, 1 server\ndigest ${digest}\n`,
      stderr: '',
    });
  });

  it('push of a package with an error finding exits 1 with the findings and uploads nothing', async () => {
    const pkg = await builtPackage();
    await writeFile(join(pkg, 'skills/review/SKILL.md'), SKILL('not-review'));
    const ref = reference();
    const outcome = await run(['plugin', 'push', pkg, ref, '--insecure-http']);
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(/^error AR9O1 skill\.name-mismatch skills\/review\/SKILL\.md#\S*: /m);
    expect(outcome.stderr).toMatch(
      new RegExp(
        `^agentproto: PLUGIN_OCI_INVALID_PACKAGE: ${ref.replaceAll('.', '\\.')}: ${pkg.replaceAll('.', '\\.')} fails validation`,
        'm',
      ),
    );
    const repository = ref.slice(registry.host.length + 1, -':v1'.length);
    expect(await new OciClient({ url: registry.url, repository, allowInsecureHttp: true }).listTags()).toEqual([]);

    const json = await run(['plugin', 'push', pkg, ref, '--insecure-http', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      dir: pkg,
      ref,
      pushed: false,
      code: 'PLUGIN_OCI_INVALID_PACKAGE',
      findings: [expect.objectContaining({ code: 'skill.name-mismatch' })],
    });
  });

  it('pull refuses a non-empty destination and a missing tag with their codes, exit 1, and writes nothing', async () => {
    const ref = reference();
    await runJson(['plugin', 'push', await builtPackage(), ref, '--insecure-http']);
    const base = await scratch();
    const full = join(base, 'full');
    await mkdir(full);
    await writeFile(join(full, 'mine.txt'), 'keep');
    const refused = await run(['plugin', 'pull', ref, full, '--insecure-http']);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe(
      `agentproto: PLUGIN_OCI_DESTINATION_EXISTS: ${ref}: ${full} exists and is not an empty folder; pull into a new path\n` +
        'hint: pull into a folder that does not exist yet or is empty; the existing one was left untouched\n',
    );
    expect(await readdir(full)).toEqual(['mine.txt']);

    const missing = ref.replace(/:v1$/, ':nope');
    const notFound = await run(['plugin', 'pull', missing, join(base, 'x'), '--insecure-http']);
    expect(notFound.code).toBe(1);
    expect(notFound.stderr).toBe(
      `agentproto: PLUGIN_OCI_NOT_FOUND: ${missing}: the registry has no artifact under this reference\n`,
    );
    expect((await readdir(base)).sort()).toEqual(['full']);
  });

  it('a wrong command line exits 2; a reference push cannot use exits 1 with REGISTRY_INVALID', async () => {
    const pkg = await builtPackage();
    for (const argv of [
      ['plugin', 'push', pkg],
      ['plugin', 'pull', reference()],
      ['plugin', 'push', pkg, reference(), '--password', 'hunter2'],
      ['plugin', 'pull', reference(), 'x', '--token', 'hunter2'],
    ]) {
      const outcome = await run(argv);
      expect(outcome.code, argv.join(' ')).toBe(2);
      expect(outcome.stderr).toMatch(/^agentproto: /);
    }
    const byDigest = await run([
      'plugin',
      'push',
      pkg,
      `${registry.host}/plugins/x@sha256:${'a'.repeat(64)}`,
      '--insecure-http',
    ]);
    expect(byDigest.code).toBe(1);
    expect(byDigest.stderr).toMatch(/^agentproto: REGISTRY_INVALID: .*push needs a tag/);
  });

  it('without --insecure-http a plain http registry is never spoken to in the clear', async () => {
    const pkg = await builtPackage();
    const outcome = await run(['plugin', 'push', pkg, reference()]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/^agentproto: REGISTRY_UNREACHABLE: https:\/\/127\.0\.0\.1:/);
  });
});

describe('registry credentials from the environment', () => {
  /** A bearer token service on 127.0.0.1: issues a token for the right Basic credentials only. */
  let tokenService: Server;
  let seen: string[];
  let guarded: OciRegistry;
  const user = 'ci-bot';
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const issued = `issued-${randomBytes(8).toString('hex')}`;

  beforeAll(async () => {
    seen = [];
    tokenService = createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      if (req.headers.authorization === `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: issued }));
      } else {
        res.writeHead(401).end();
      }
    });
    await new Promise<void>((resolve) => tokenService.listen(0, '127.0.0.1', resolve));
    const { port } = tokenService.address() as AddressInfo;
    // distribution's "silly" controller: a request without Authorization gets a bearer
    // challenge naming the token service above; any Authorization header is then accepted.
    guarded = await startOciRegistry({
      extraConfig: `auth:\n  silly:\n    realm: http://127.0.0.1:${port}/token\n    service: testkit\n`,
    });
  });
  afterAll(async () => {
    await guarded?.close();
    await new Promise((resolve) => tokenService?.close(resolve));
  });

  const noSecretIn = (outcome: { stdout: string; stderr: string }, secret: string) =>
    expect(`${outcome.stdout}${outcome.stderr}`).not.toContain(secret);

  it('AGENTPROTO_REGISTRY_TOKEN is sent as the bearer token; without it the push is refused with REGISTRY_AUTH', async () => {
    const pkg = await builtPackage();
    const ref = `${guarded.host}/private/tools:v1`;
    const anonymous = await run(['plugin', 'push', pkg, ref, '--insecure-http']);
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toMatch(/^agentproto: REGISTRY_AUTH: /);

    const token = `tok-${randomBytes(8).toString('hex')}`;
    vi.stubEnv('AGENTPROTO_REGISTRY_TOKEN', token);
    const pushed = await run(['plugin', 'push', pkg, ref, '--insecure-http', '--json']);
    expect(pushed.code).toBe(0);
    noSecretIn(pushed, token);
    const pulled = await run(['plugin', 'pull', ref, join(await scratch(), 'p'), '--insecure-http']);
    expect(pulled.code).toBe(0);
    noSecretIn(pulled, token);
  });

  it('AGENTPROTO_REGISTRY_USERNAME and _PASSWORD go to the token service; a wrong password fails without showing it', async () => {
    const pkg = await builtPackage();
    const ref = `${guarded.host}/private/basic:v1`;
    vi.stubEnv('AGENTPROTO_REGISTRY_USERNAME', user);
    vi.stubEnv('AGENTPROTO_REGISTRY_PASSWORD', password);
    seen.length = 0;
    const pushed = await run(['plugin', 'push', pkg, ref, '--insecure-http']);
    expect(pushed.code).toBe(0);
    expect(seen).toContain(`Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`);
    noSecretIn(pushed, password);
    noSecretIn(pushed, issued);

    const wrong = `wrong-${randomBytes(8).toString('hex')}`;
    vi.stubEnv('AGENTPROTO_REGISTRY_PASSWORD', wrong);
    const refused = await run(['plugin', 'pull', ref, join(await scratch(), 'p'), '--insecure-http']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^agentproto: REGISTRY_AUTH: .*token service .* answered 401/);
    noSecretIn(refused, wrong);
    noSecretIn(refused, user);
  });

  it('a username without a password is refused before anything is sent', async () => {
    vi.stubEnv('AGENTPROTO_REGISTRY_USERNAME', user);
    const outcome = await run([
      'plugin',
      'push',
      await builtPackage(),
      `${guarded.host}/private/x:v1`,
      '--insecure-http',
    ]);
    expect(outcome).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'agentproto: AGENTPROTO_REGISTRY_USERNAME and AGENTPROTO_REGISTRY_PASSWORD go together: set both or neither\n',
    });
  });
});
