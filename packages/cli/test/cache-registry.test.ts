import { randomBytes } from 'node:crypto';
import { readFile, readlink, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OciClient } from '@agentproto/oci';
import { type CacheKey, type StoredTree, objectTag, openContentStore } from '@agentproto/content-cache';
import { type OciRegistry, startOciRegistry } from '@agentproto/testkit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { run, runJson } from './support/run.js';
import { scratchFolders, writeSampleSkill } from './support/scratch.js';

const scratch = scratchFolders();

let registry: OciRegistry;
beforeAll(async () => {
  registry = await startOciRegistry();
});
afterAll(async () => {
  await registry?.close();
});
beforeEach(() => {
  for (const name of ['AGENTPROTO_REGISTRY_USERNAME', 'AGENTPROTO_REGISTRY_PASSWORD', 'AGENTPROTO_REGISTRY_TOKEN'])
    vi.stubEnv(name, '');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

let repositories = 0;
/** The registry flags for a repository no other test uses. */
const remote = () => ['--remote', registry.url, '--repository', `cache/cli${++repositories}`, '--insecure-http'];

interface KeyOutcome {
  key: CacheKey;
  objectId: string;
}
interface PushReport {
  remote: string;
  pushed: KeyOutcome[];
  failed: (KeyOutcome & { code: string; message: string })[];
}
interface PullReport {
  remote: string;
  root: string;
  pulled: (KeyOutcome & { digest: string; files: number; bytes: number })[];
  present: KeyOutcome[];
  failed: (KeyOutcome & { code: string; message: string })[];
}

/** Two stores side by side and a sample skill put into the first. */
async function setup(): Promise<{ first: string; second: string; base: string; put: StoredTree }> {
  const base = await realpath(await scratch());
  const skill = await writeSampleSkill(join(base, 'hello'));
  const first = join(base, 'first');
  const put = await runJson<StoredTree>(['cache', 'put', skill, '--store', first, '--name', 'hello']);
  return { first, second: join(base, 'second'), base, put };
}

describe('agentproto cache push and pull', () => {
  it('push from one root and pull into another: the second store finds the key with the same digest', async () => {
    const { first, second, put } = await setup();
    const flags = remote();
    const pushed = await runJson<PushReport>(['cache', 'push', '--store', first, ...flags]);
    expect(pushed.failed).toEqual([]);
    expect(pushed.pushed).toEqual([
      { key: expect.objectContaining({ declaration: { name: 'hello' } }), objectId: put.objectId },
    ]);
    const key = pushed.pushed[0]!.key;

    const pulled = await runJson<PullReport>(['cache', 'pull', '--store', second, ...flags]);
    expect(pulled).toMatchObject({
      failed: [],
      present: [],
      pulled: [{ key, objectId: put.objectId, digest: put.digest, files: put.files, bytes: put.bytes }],
    });

    const store = await openContentStore({ root: second });
    const found = await store.lookup(key);
    expect(found).toMatchObject({
      objectId: put.objectId,
      digest: put.digest,
      files: put.files,
      bytes: put.bytes,
      source: 'store',
    });
    expect(found!.path).not.toBe(put.path);
    expect(await readFile(join(found!.path, 'SKILL.md'), 'utf8')).toBe(
      await readFile(join(put.path, 'SKILL.md'), 'utf8'),
    );
    expect(await readlink(join(found!.path, 'GREETING.md'))).toBe('references/greeting.md');

    // Pulled again: already present, nothing fetched twice.
    const again = await runJson<PullReport>(['cache', 'pull', '--store', second, ...flags]);
    expect(again).toMatchObject({ pulled: [], failed: [], present: [{ key, objectId: put.objectId }] });
  });

  it('prints what it pushed and pulled, one line a key and a summary', async () => {
    const { first, second, put } = await setup();
    const flags = remote();
    const label = `${registry.url}/${flags[3]}`;
    const pushed = await run(['cache', 'push', '--store', first, ...flags]);
    const keyText = `provider=local version=${put.digest.slice(0, 19)} declaration={"name":"hello"}`;
    expect(pushed).toEqual({
      code: 0,
      stdout: `pushed ${put.objectId.slice(0, 12)}  ${keyText}\npushed 1 key to ${label}\n`,
      stderr: '',
    });
    const pulled = await run(['cache', 'pull', '--store', second, ...flags]);
    expect(pulled.code).toBe(0);
    expect(pulled.stdout).toMatch(
      new RegExp(
        `^pulled ${put.objectId.slice(0, 12)}  .+  3 files \\(.+\\)\\npulled 1 key from .+ into ${second}, 0 already present\\n$`,
      ),
    );
  });

  it('a tampered object in the registry is reported as failed with REGISTRY_DIGEST_MISMATCH, exit 1, and not stored; the others are pulled', async () => {
    const { first, second, base } = await setup();
    const other = await writeSampleSkill(join(base, 'other'), 'Another skill.');
    const otherPut = await runJson<StoredTree>(['cache', 'put', other, '--store', first, '--name', 'other']);
    const flags = remote();
    const pushed = await runJson<PushReport>(['cache', 'push', '--store', first, ...flags]);
    expect(pushed.pushed).toHaveLength(2);

    const client = new OciClient({ url: registry.url, repository: flags[3]!, allowInsecureHttp: true });
    const layer = (await client.getManifest(objectTag(otherPut.objectId)))!.manifest.layers[0]!;
    const path = registry.blobPath(layer.digest);
    await writeFile(path, randomBytes((await readFile(path)).length));

    const outcome = await run(['cache', 'pull', '--store', second, ...flags, '--json']);
    expect(outcome.code).toBe(1);
    const report = JSON.parse(outcome.stdout) as PullReport;
    expect(report.failed).toEqual([
      expect.objectContaining({ objectId: otherPut.objectId, code: 'REGISTRY_DIGEST_MISMATCH' }),
    ]);
    expect(report.pulled.map((p) => p.key.declaration)).toEqual([{ name: 'hello' }]);
    const store = await openContentStore({ root: second });
    expect(await store.lookup(report.failed[0]!.key)).toBeUndefined();
    expect((await store.list()).objects.map((o) => o.objectId)).not.toContain(otherPut.objectId);
  });

  it('an empty store pushes nothing and exits 0; an empty registry pulls nothing', async () => {
    const base = await scratch();
    const flags = remote();
    expect(await runJson<PushReport>(['cache', 'push', '--store', join(base, 'a'), ...flags])).toEqual({
      remote: `${registry.url}/${flags[3]}`,
      pushed: [],
      failed: [],
    });
    expect(await runJson<PullReport>(['cache', 'pull', '--store', join(base, 'b'), ...flags])).toMatchObject({
      pulled: [],
      present: [],
      failed: [],
    });
  });

  it('an unreachable registry: push reports each key as failed, pull exits 1 with REGISTRY_UNREACHABLE', async () => {
    const { first, second } = await setup();
    const flags = ['--remote', 'http://127.0.0.1:1', '--repository', 'cache/none', '--insecure-http'];
    const push = await run(['cache', 'push', '--store', first, ...flags, '--json']);
    expect(push.code).toBe(1);
    expect((JSON.parse(push.stdout) as PushReport).failed).toEqual([
      expect.objectContaining({ code: 'REGISTRY_UNREACHABLE' }),
    ]);
    const pull = await run(['cache', 'pull', '--store', second, ...flags]);
    expect(pull.code).toBe(1);
    expect(pull.stderr).toMatch(/^agentproto: REGISTRY_UNREACHABLE: http:\/\/127\.0\.0\.1:1: /);
  });

  it.each([
    [['cache', 'push', '--repository', 'cache/x'], '--remote URL'],
    [['cache', 'pull', '--remote', 'https://registry.example.com'], '--repository NAME'],
    [['cache', 'push', '--remote', 'http://127.0.0.1:5000', '--repository', 'cache/x'], '--insecure-http'],
    [
      ['cache', 'pull', '--remote', 'https://registry.example.com', '--repository', 'cache/x', '--password', 'hunter2'],
      'cache pull: unknown option --password',
    ],
  ])('%j is a wrong command line: exit 2 naming %s', async (argv, named) => {
    const outcome = await run([...argv, '--store', await scratch()]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr.split('\n')[0]).toContain(named);
  });
});
