import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { makeRepo, watchProc } from '@agentproto/testkit';
import { createRegistry, gitProvider, prepareSkills, resolveSkills, type Sandbox } from '@agentproto/skill-providers';
import { parseSkillDeclaration } from '../../src/entries/index.js';
import { recordingSandbox } from '../support/git.js';
import { newCache } from '../support/skills.js';
import { tempDir } from '../support/temp.js';

const SSH_CONFIG = {
  deploy_key_secret_name: 'skills-read-key',
  known_hosts: 'ext ssh-ed25519 AAAA\nfd ssh-ed25519 AAAA\nfile ssh-ed25519 AAAA',
};

/**
 * Sources git would give to something other than its https, http and ssh transports:
 * `<transport>::<address>` runs `git-remote-<transport>` (`ext::` a command, `fd::` a
 * descriptor, `file::` this disk), and the other schemes are not ours to speak. Each has
 * the shape of an scp-like address (`host:path`) or of a URL.
 */
function refusedSources(repo: string, canary: string): string[] {
  return [
    `ext::sh`,
    `ext::${canary}`,
    `ext::git-upload-pack%20${repo}`,
    `EXT::${canary}.git`,
    `fd::3`,
    `fd::0,1/${canary}.git`,
    `file::${repo}`,
    `x+y::${canary}.git`,
    `ssh::git@127.0.0.1:${canary}.git`,
    `file://${repo}`,
    `git://127.0.0.1/${canary}.git`,
    `git+ssh://127.0.0.1/${canary}.git`,
  ];
}

/** The sandbox of a preparation, counting every command and private folder. */
async function countingSandbox() {
  const recording = await recordingSandbox();
  let privateDirs = 0;
  const sandbox: Sandbox = {
    ...recording.sandbox,
    async makePrivateDir() {
      privateDirs += 1;
      return recording.sandbox.makePrivateDir();
    },
  };
  return { sandbox, runs: recording.runs, written: recording.written, privateDirs: () => privateDirs };
}

describe('skill sources: only https, http and ssh addresses reach a provider', () => {
  it('refuses remote-helper syntax and other schemes, as git strings and as objects, before any process starts', async () => {
    const root = await tempDir();
    const made = await makeRepo({ root, name: 'local.git', commits: [{ files: { 'skills/a/SKILL.md': '# a\n' } }] });
    const canary = `canary${randomBytes(6).toString('hex')}`;
    const registry = createRegistry([gitProvider({ deployKeySecretNames: ['skills-read-key'] })]);
    const counting = await countingSandbox();
    const cache = await newCache();
    const watch = watchProc([canary, made.path]);
    try {
      for (const source of refusedSources(made.path, canary)) {
        const declarations = [
          [`${source}@main#skills/a`],
          [`${source}#skills/a`],
          [{ provider: 'git', source, version: 'main', path: 'skills/a', name: 'a', config: SSH_CONFIG }],
          [{ provider: 'git', source, version: 'main', path: 'skills/a', name: 'a' }],
        ];
        for (const declaration of declarations) {
          expect(() => parseSkillDeclaration(declaration), source).toThrow(
            expect.objectContaining({ code: 'SKILL_REPOSITORY_INVALID' }),
          );
          for (const run of [prepareSkills, resolveSkills]) {
            await expect(
              run(declaration, { cache, sandbox: counting.sandbox, registry, secrets: () => 'key' }),
              source,
            ).rejects.toMatchObject({ code: 'SKILL_REPOSITORY_INVALID' });
          }
        }
      }
    } finally {
      const seen = await watch.stop();
      expect(seen.hits).toEqual([]);
    }
    expect(counting.runs).toEqual([]);
    expect(counting.written).toEqual([]);
    expect(counting.privateDirs()).toBe(0);
  });

  it('the git provider refuses them too when handed a source that skipped the parser', () => {
    const provider = gitProvider({ deployKeySecretNames: ['skills-read-key'] });
    for (const source of refusedSources('/srv/repo.git', 'canary')) {
      expect(
        () =>
          provider.validate({
            provider: 'git',
            source,
            version: 'main',
            path: 'skills/a',
            name: 'a',
            config: SSH_CONFIG,
          }),
        source,
      ).toThrow(expect.objectContaining({ code: 'SKILL_CONFIG_INVALID' }));
    }
  });

  it('gives the remote-helper reason even when a later @ could read as a ref or a password', () => {
    expect(() => parseSkillDeclaration(['ext::sh@main#skills/a'])).toThrow(/remote-helper syntax "ext::"/);
    expect(() => parseSkillDeclaration(['fd::alice:secret@host/x.git'])).toThrow(/remote-helper syntax "fd::"/);
  });
});
