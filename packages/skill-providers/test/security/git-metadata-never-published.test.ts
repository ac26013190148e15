import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UnsafeTreeError, hashTree } from '@agentproto/content-cache';
import {
  createRegistry,
  gitProvider,
  localProvider,
  prepareSkills,
  type LocalSandboxOptions,
} from '@agentproto/skill-providers';
import { describe, expect, it } from 'vitest';
import { recordingSandbox, servedRepo } from '../support/git.js';
import { newCache } from '../support/skills.js';
import { tempDir } from '../support/temp.js';

const FSMONITOR = '[core]\n\tfsmonitor = "touch /tmp/agentproto-pwned"\n';

/**
 * Skills whose trees hold a `.git` that git's own fetch does not recognise as one on Linux
 * but macOS or Windows do (or that git refuses to check out): git commits them happily
 * through fast-import, and the store must still never publish them.
 */
function files() {
  return {
    'ok/SKILL.md': '---\nname: ok\n---\n',
    'short/SKILL.md': '---\nname: short\n---\n',
    'short/git~1/config': FSMONITOR,
    'hfs/SKILL.md': '---\nname: hfs\n---\n',
    'hfs/.g\u200cit/config': FSMONITOR,
    'stream/SKILL.md': '---\nname: stream\n---\n',
    'stream/.git::$INDEX_ALLOCATION/config': FSMONITOR,
    'modules/SKILL.md': '---\nname: modules\n---\n',
    'modules/.gitmodules': { symlink: 'SKILL.md' },
  };
}

/** What the store and the sandbox hold once a preparation failed: every list must be empty. */
async function leftovers(storeRoot: string, privateRoot: string) {
  const list = (dir: string) => readdir(dir).catch(() => [] as string[]);
  return {
    objects: await list(join(storeRoot, 'objects')),
    links: await list(join(storeRoot, 'links')),
    staging: (await list(join(storeRoot, 'staging'))).filter((name) => !name.endsWith('.lock')),
    private: await list(privateRoot),
  };
}

const sandboxes: Array<[string, LocalSandboxOptions]> = [
  ['system git', {}],
  ['isomorphic-git', { capabilities: { git: false, ssh: false } }],
];

describe.each(sandboxes)('git metadata in a git skill (%s)', (_name, sandboxOptions) => {
  it('never publishes a skill whose tree holds a .git in a spelling git refuses (git~1, .g\\u200cit, an NTFS stream) or a .gitmodules link: SKILL_UNSAFE_TREE naming the path, nothing published, no staging or private folder left', async () => {
    const { url } = await servedRepo({ commits: [{ files: files() }] });
    const registry = createRegistry([gitProvider()]);
    const cases: Array<[string, string, string]> = [
      ['short', 'git-dir', 'git~1'],
      ['hfs', 'git-dir', '.g\u200cit'],
      ['stream', 'git-dir', '.git::$INDEX_ALLOCATION'],
      ['modules', 'gitmodules-link', '.gitmodules'],
    ];
    for (const [path, reason, entry] of cases) {
      const { sandbox, privateRoot } = await recordingSandbox(sandboxOptions);
      const cache = await newCache();
      const error = await prepareSkills([`${url}#${path}`], { cache, sandbox, registry }).then(
        () => undefined,
        (failure: unknown) => failure as Record<string, unknown>,
      );
      expect(error, path).toMatchObject({ code: 'SKILL_UNSAFE_TREE', reason: 'CACHE_UNSAFE_TREE' });
      expect(error?.cause, path).toBeInstanceOf(UnsafeTreeError);
      expect(error?.cause, path).toMatchObject({ reason, path: entry });
      expect(String(error?.message), path).toContain(JSON.stringify(entry));
      expect(await leftovers(cache.root, privateRoot), path).toEqual({
        objects: [],
        links: [],
        staging: [],
        private: [],
      });
    }
    // The same repository's clean skill is published.
    const { sandbox } = await recordingSandbox(sandboxOptions);
    const [skill] = await prepareSkills([`${url}#ok`], { cache: await newCache(), sandbox, registry });
    expect(await readdir(skill!.dir)).toEqual(['SKILL.md']);
  });
});

describe('a local skill folder that is a git checkout', () => {
  it('is published without its .git folder, under the digest of the tree without it, and a new commit that leaves the files alone keeps the version', async () => {
    const work = await tempDir();
    const source = join(work, 'skill');
    await mkdir(join(source, 'docs'), { recursive: true });
    await writeFile(join(source, 'SKILL.md'), '---\nname: checkout\n---\n');
    await writeFile(join(source, 'docs', 'a.md'), 'a\n');
    // core.fsmonitor=false on the command line wins over the hostile one written below.
    const git = (...args: string[]) => {
      const result = spawnSync(
        'git',
        ['-C', source, '-c', 'core.fsmonitor=false', '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args],
        { encoding: 'utf8' },
      );
      expect(result.status, result.stderr).toBe(0);
    };
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'one');
    // The owner's repository configuration: what must never reach a published folder.
    await writeFile(join(source, '.git', 'config'), FSMONITOR, { flag: 'a' });
    const withoutGit = await hashTree(source, undefined, { skipDotGit: true });

    const registry = createRegistry([localProvider({ roots: [work] })]);
    const entry = { provider: 'local', source, version: '*', name: 'checkout' };
    const [skill] = await prepareSkills([entry], { cache: await newCache(), registry });
    expect((await readdir(skill!.dir)).sort()).toEqual(['SKILL.md', 'docs']);
    expect(await readFile(join(skill!.dir, 'SKILL.md'), 'utf8')).toBe('---\nname: checkout\n---\n');
    expect(skill!.version).toBe(withoutGit.digest);

    git('commit', '-q', '--allow-empty', '-m', 'two');
    const [again] = await prepareSkills([entry], { cache: await newCache(), registry });
    expect(again!.version).toBe(withoutGit.digest);
    // A pin on that digest holds.
    const [pinned] = await prepareSkills([{ ...entry, version: withoutGit.digest }], {
      cache: await newCache(),
      registry,
    });
    expect(pinned!.version).toBe(withoutGit.digest);
  });
});
