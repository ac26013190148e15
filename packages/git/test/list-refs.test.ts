import { describe, expect, it } from 'vitest';
import { isolatedGitEnv, makeRepo, parseLsRemote, run } from '@agentproto/testkit';
import { listRefs } from '../src/index.js';
import { asLsRemote, scratch, serve } from './support/fixtures.js';

describe('listRefs', () => {
  it('lists every ref as git ls-remote does, annotated tags peeled and HEAD with its symref', async () => {
    const root = await scratch();
    const repo = await makeRepo({
      root,
      name: 'skills.git',
      commits: [
        { files: { 'skills/a/SKILL.md': 'a' } },
        { branch: 'dev', files: { 'skills/b/SKILL.md': 'b' } },
        { branch: 'main', files: { 'x.md': 'x' } },
      ],
      branches: [{ name: 'release', from: 0 }],
      tags: [
        { name: 'v1', target: 0, annotated: true, message: 'first release' },
        { name: 'v2', target: 'main' },
        { name: 'dev', target: 0, annotated: true },
      ],
      head: 'dev',
    });
    const server = await serve({ root });
    const url = server.urlFor('skills.git');

    const listed = await listRefs(url);

    expect(listed.url).toBe(url);
    const { stdout } = await run('git', ['-c', 'protocol.version=2', 'ls-remote', url], { env: isolatedGitEnv() });
    expect(asLsRemote(listed)).toEqual(parseLsRemote(stdout));
    expect(asLsRemote(listed)).toEqual(await repo.refs());
    expect(listed.refs.find((ref) => ref.name === 'HEAD')).toEqual({
      name: 'HEAD',
      oid: repo.head('dev'),
      symref: 'refs/heads/dev',
    });
    const v1 = listed.refs.find((ref) => ref.name === 'refs/tags/v1');
    expect(v1?.peeled).toBe(repo.commits[0]);
    expect(v1?.oid).not.toBe(repo.commits[0]); // the tag object
    expect(listed.refs.find((ref) => ref.name === 'refs/tags/v2')).toEqual({
      name: 'refs/tags/v2',
      oid: repo.commits[2],
    });
  });

  it('asks with protocol v2 in two requests: GET info/refs, POST ls-refs', async () => {
    const root = await scratch();
    await makeRepo({ root, name: 'r.git', commits: [{ files: { 'a.md': 'a' } }] });
    const server = await serve({ root });
    await listRefs(server.urlFor('r.git'));
    expect(server.stats.log.map((entry) => [entry.method, entry.path, entry.status, entry.gitProtocol])).toEqual([
      ['GET', '/r.git/info/refs', 200, 'version=2'],
      ['POST', '/r.git/git-upload-pack', 200, 'version=2'],
    ]);
  });

  it('reports a missing repository as GIT_REPOSITORY_NOT_FOUND', async () => {
    const root = await scratch();
    const server = await serve({ root });
    await expect(listRefs(server.urlFor('nope.git'))).rejects.toMatchObject({
      code: 'GIT_REPOSITORY_NOT_FOUND',
      url: server.urlFor('nope.git'),
    });
  });

  it('reports an unreachable server as GIT_TRANSPORT', async () => {
    const root = await scratch();
    const server = await serve({ root });
    const url = server.urlFor('r.git');
    await server.close();
    await expect(listRefs(url)).rejects.toMatchObject({ code: 'GIT_TRANSPORT', reason: 'ECONNREFUSED' });
  });

  it('refuses a URL before sending anything', async () => {
    await expect(listRefs('https://user:pw@example.com/r.git')).rejects.toMatchObject({
      code: 'GIT_URL_HAS_CREDENTIALS',
    });
    await expect(listRefs('ssh://git@example.com/r.git')).rejects.toMatchObject({ code: 'GIT_UNSUPPORTED_URL' });
  });
});
