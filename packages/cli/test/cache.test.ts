import { chmod, lstat, mkdir, readFile, readdir, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hashTree } from '@agentproto/content-cache';
import type { GcReport, StoreListing, StoredTree, VerifyReport } from '@agentproto/content-cache';
import { describe, expect, it } from 'vitest';
import { run, runJson } from './support/run.js';
import { scratchFolders, writeSampleSkill } from './support/scratch.js';

const scratch = scratchFolders();

/** A store root and a sample skill folder, side by side in a fresh scratch folder. */
async function setup(): Promise<{ root: string; skill: string; base: string }> {
  const base = await realpath(await scratch());
  const skill = await writeSampleSkill(join(base, 'hello'));
  return { root: join(base, 'store'), skill, base };
}

/** Edits a file of a published object, as a disk error or a careless hand would. */
async function corrupt(root: string, objectId: string, file: string): Promise<void> {
  const path = join(root, 'objects', objectId, 'content', file);
  await chmod(join(root, 'objects', objectId, 'content'), 0o755);
  await chmod(path, 0o644);
  await writeFile(path, 'tampered\n');
}

describe('cache put', () => {
  it('stores a folder whole: contents, executable bits and links as links', async () => {
    const { root, skill } = await setup();
    const tree = await runJson<StoredTree>(['cache', 'put', skill, '--store', root]);
    expect(tree.fromCache).toBe(false);
    expect(tree.files).toBe(3);
    expect(await readFile(join(tree.path, 'SKILL.md'), 'utf8')).toBe(await readFile(join(skill, 'SKILL.md'), 'utf8'));
    expect((await lstat(join(tree.path, 'scripts/run.sh'))).mode & 0o111).not.toBe(0);
    expect(await readlink(join(tree.path, 'GREETING.md'))).toBe('references/greeting.md');
    expect(await realpath(tree.linkPath)).toBe(await realpath(tree.path));
  });

  it('a second put of the same folder is served from the cache', async () => {
    const { root, skill } = await setup();
    const first = await runJson<StoredTree>(['cache', 'put', skill, '--store', root]);
    const second = await runJson<StoredTree>(['cache', 'put', skill, '--store', root]);
    expect(second).toEqual({ ...first, fromCache: true, source: 'store' });
  });

  it('keys the folder by its real path and tree digest, under provider "local" unless told', async () => {
    const { root, skill, base } = await setup();
    await symlink(skill, join(base, 'alias'));
    const { digest } = await hashTree(skill);
    await runJson(['cache', 'put', join(base, 'alias'), '--store', root]);
    await runJson(['cache', 'put', skill, '--store', root, '--name', 'hello', '--provider', 'demo']);
    const { keys } = await runJson<StoreListing>(['cache', 'ls', '--store', root]);
    expect(keys.map((k) => k.key).sort((a, b) => a.provider.localeCompare(b.provider))).toEqual([
      { provider: 'demo', declaration: { name: 'hello' }, version: digest, contentId: digest },
      { provider: 'local', declaration: { path: skill }, version: digest, contentId: digest },
    ]);
  });

  it('with --name, a changed folder becomes a new object and the same link points at it', async () => {
    const { root, skill } = await setup();
    const before = await runJson<StoredTree>(['cache', 'put', skill, '--store', root, '--name', 'hello']);
    await writeFile(join(skill, 'references/greeting.md'), 'Say hello twice.\n');
    const after = await runJson<StoredTree>(['cache', 'put', skill, '--store', root, '--name', 'hello']);
    expect(after.objectId).not.toBe(before.objectId);
    expect(after.linkPath).toBe(before.linkPath);
    expect(await readFile(join(after.linkPath, 'references/greeting.md'), 'utf8')).toBe('Say hello twice.\n');
  });

  it('prints objectId, path, linkPath and fromCache, one per line', async () => {
    const { root, skill } = await setup();
    const outcome = await run(['cache', 'put', skill, '--store', root]);
    expect(outcome.code).toBe(0);
    const tree = await runJson<StoredTree>(['cache', 'put', skill, '--store', root]);
    expect(outcome.stdout).toMatch(new RegExp(`^objectId +${tree.objectId}$`, 'm'));
    expect(outcome.stdout).toMatch(new RegExp(`^path +${tree.path}$`, 'm'));
    expect(outcome.stdout).toMatch(new RegExp(`^linkPath +${tree.linkPath}$`, 'm'));
    expect(outcome.stdout).toMatch(/^fromCache +false$/m);
  });

  it('a path that is not a folder exits 1 and names it', async () => {
    const { root, base } = await setup();
    const outcome = await run(['cache', 'put', join(base, 'missing'), '--store', root]);
    expect(outcome).toEqual({
      code: 1,
      stdout: '',
      stderr: `agentproto: CLI_PATH_NOT_FOUND: dir ${join(base, 'missing')}: folder does not exist\n`,
    });
  });

  it('refuses a store root inside the folder it stores', async () => {
    const { skill } = await setup();
    const outcome = await run(['cache', 'put', skill, '--store', join(skill, 'store')]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/^agentproto: CACHE_ROOT_IN_WORKSPACE: /);
  });

  it('refuses a link that leaves the folder, and publishes nothing', async () => {
    const { root, skill, base } = await setup();
    await writeFile(join(base, 'secret'), 'not part of the skill\n');
    await symlink('../secret', join(skill, 'escape'));
    const outcome = await run(['cache', 'put', skill, '--store', root]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/^agentproto: CACHE_UNSAFE_TREE: .*"escape"/);
    expect(await readdir(join(root, 'objects'))).toEqual([]);
  });
});

describe('cache ls', () => {
  it('--json lists each object, the keys that reach it and the declaration links', async () => {
    const { root, skill } = await setup();
    const tree = await runJson<StoredTree>(['cache', 'put', skill, '--store', root]);
    const listing = await runJson<StoreListing>(['cache', 'ls', '--store', root]);
    expect(listing.objects).toEqual([
      expect.objectContaining({
        objectId: tree.objectId,
        provider: 'local',
        digest: tree.digest,
        files: 3,
        bytes: tree.bytes,
      }),
    ]);
    expect(listing.keys).toEqual([expect.objectContaining({ objectId: tree.objectId })]);
    expect(listing.links).toEqual([{ name: expect.any(String), objectId: tree.objectId }]);
  });

  it('prints one aligned line per object with its keys beneath, then the totals', async () => {
    const { root, skill, base } = await setup();
    const other = await writeSampleSkill(join(base, 'other'), 'Another skill.');
    const a = await runJson<StoredTree>(['cache', 'put', skill, '--store', root]);
    const b = await runJson<StoredTree>(['cache', 'put', other, '--store', root, '--provider', 'a-longer-provider']);
    const { code, stdout } = await run(['cache', 'ls', '--store', root]);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    const header = lines[0]!;
    const rows = lines.filter((line) => /^[0-9a-f]{12} /.test(line));
    expect(rows.map((row) => row.slice(0, 12)).sort()).toEqual(
      [a.objectId.slice(0, 12), b.objectId.slice(0, 12)].sort(),
    );
    for (const column of ['PROVIDER', 'FILES', 'SIZE', 'LINKS', 'DIGEST']) {
      const at = header.indexOf(column);
      for (const row of rows) expect(row[at - 1], `${column} in ${row}`).toBe(' ');
      for (const row of rows) expect(row[at], `${column} in ${row}`).not.toBe(' ');
    }
    expect(lines.filter((line) => line.startsWith('  key: '))).toHaveLength(2);
    expect(stdout).toContain(`  key: provider=local version=${a.digest.slice(0, 19)} declaration={"path":"${skill}"}`);
    expect(lines.at(-1)).toBe(`2 objects, 2 keys, 2 links in ${root}`);
  });

  it('of an empty store says it holds nothing', async () => {
    const { root } = await setup();
    expect(await run(['cache', 'ls', '--store', root])).toEqual({
      code: 0,
      stdout: `0 objects, 0 keys, 0 links in ${root}\n`,
      stderr: '',
    });
  });
});

describe('cache verify', () => {
  it('exits 0 when every object still hashes to its marker', async () => {
    const { root, skill } = await setup();
    const tree = await runJson<StoredTree>(['cache', 'put', skill, '--store', root]);
    const outcome = await run(['cache', 'verify', '--store', root]);
    expect(outcome).toEqual({ code: 0, stdout: 'checked 1 object: 1 ok, 0 corrupt\n', stderr: '' });
    expect(await runJson<VerifyReport>(['cache', 'verify', '--store', root])).toEqual({
      checked: 1,
      ok: [tree.objectId],
      corrupt: [],
    });
  });

  it('exits 1 and names the corrupt object', async () => {
    const { root, skill } = await setup();
    const tree = await runJson<StoredTree>(['cache', 'put', skill, '--store', root]);
    await corrupt(root, tree.objectId, 'SKILL.md');
    const outcome = await run(['cache', 'verify', '--store', root]);
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toContain('checked 1 object: 0 ok, 1 corrupt\n');
    expect(outcome.stdout).toContain(`corrupt ${tree.objectId}: `);
    const json = await run(['cache', 'verify', '--store', root, '--json']);
    expect(json.code).toBe(1);
    expect((JSON.parse(json.stdout) as VerifyReport).corrupt).toEqual([
      { objectId: tree.objectId, reason: expect.any(String) },
    ]);
  });

  it('--quarantine sets the corrupt object aside, so the next put stores the folder afresh', async () => {
    const { root, skill } = await setup();
    const tree = await runJson<StoredTree>(['cache', 'put', skill, '--store', root]);
    await corrupt(root, tree.objectId, 'references/greeting.md');
    const outcome = await run(['cache', 'verify', '--store', root, '--quarantine', '--json']);
    expect(outcome.code).toBe(1);
    const [entry] = (JSON.parse(outcome.stdout) as VerifyReport).corrupt;
    expect(entry?.quarantinedTo).toMatch(new RegExp(`^${join(root, 'quarantine')}/`));
    const again = await runJson<StoredTree>(['cache', 'put', skill, '--store', root]);
    expect(again).toMatchObject({ objectId: tree.objectId, fromCache: false });
    expect(await readFile(join(again.path, 'references/greeting.md'), 'utf8')).toBe('Say hello.\n');
    expect((await run(['cache', 'verify', '--store', root])).code).toBe(0);
  });
});

describe('cache gc', () => {
  it('keeps every object a key or a link still reaches', async () => {
    const { root, skill } = await setup();
    await runJson(['cache', 'put', skill, '--store', root]);
    expect(await runJson<GcReport>(['cache', 'gc', '--store', root])).toEqual({
      removedObjects: [],
      removedKeys: 0,
      removedLinks: 0,
      removedStaging: 0,
      removedPrivate: 0,
      freedBytes: 0,
    });
    expect((await runJson<StoreListing>(['cache', 'ls', '--store', root])).objects).toHaveLength(1);
  });

  it('removes an object once no key record or declaration link reaches it', async () => {
    const { root, skill } = await setup();
    const tree = await runJson<StoredTree>(['cache', 'put', skill, '--store', root]);
    await rm(join(root, 'keys'), { recursive: true });
    await rm(join(root, 'links'), { recursive: true });
    await mkdir(join(root, 'keys'));
    await mkdir(join(root, 'links'));
    const outcome = await run(['cache', 'gc', '--store', root]);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toBe(
      `removed 1 object (${tree.bytes} B), 0 keys, 0 links, 0 staging folders, 0 private folders of dead preparations\nremoved ${tree.objectId}\n`,
    );
    expect(await readdir(join(root, 'objects'))).toEqual([]);
  });
});

describe('every cache command', () => {
  it.each(['ls', 'verify', 'gc'])('cache %s --json prints exactly one JSON document on stdout', async (command) => {
    const { root, skill } = await setup();
    await runJson(['cache', 'put', skill, '--store', root]);
    const outcome = await run(['cache', command, '--store', root, '--json']);
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toBe('');
    expect(() => JSON.parse(outcome.stdout)).not.toThrow();
  });

  it('a library error prints "agentproto: <code>: <message>" on stderr and exits 1; with --json, one JSON document', async () => {
    const { base } = await setup();
    await writeFile(join(base, 'a-file'), '');
    const json = await run(['cache', 'ls', '--store', join(base, 'a-file'), '--json']);
    expect(json.code).toBe(1);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toEqual({
      error: {
        code: 'CACHE_ROOT_UNUSABLE',
        message: expect.stringContaining(`cache root ${join(base, 'a-file')}: `),
        hint: '--store must name a folder you can write to, or a path where one can be created',
      },
    });
    const outcome = await run(['cache', 'ls', '--store', join(base, 'a-file')]);
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(
      new RegExp(
        `^agentproto: CACHE_ROOT_UNUSABLE: cache root ${join(base, 'a-file')}: .*\\nhint: --store must name a folder .*\\n$`,
      ),
    );
  });
});
