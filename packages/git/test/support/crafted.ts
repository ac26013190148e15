import { isolatedGitEnv, run, type MadeRepo } from '@agentproto/testkit';

// Crafting objects makeRepo will not make (it refuses bad names, and has no submodules).

export async function blob(repo: MadeRepo, content: string): Promise<string> {
  const { stdout } = await run('git', ['hash-object', '-w', '--stdin'], {
    env: isolatedGitEnv({ GIT_DIR: repo.path }),
    input: content,
  });
  return stdout.trim();
}

export async function commitTree(repo: MadeRepo, lines: string[], branch: string): Promise<string> {
  const env = isolatedGitEnv({ GIT_DIR: repo.path });
  const tree = (await run('git', ['mktree'], { env, input: `${lines.join('\n')}\n` })).stdout.trim();
  return commitOf(repo, tree, branch);
}

/** A tree object written byte for byte, without git's checks on names. */
export async function rawTree(
  repo: MadeRepo,
  entries: Array<[mode: string, name: string, oid: string]>,
): Promise<string> {
  const content = Buffer.concat(
    entries.map(([mode, name, oid]) =>
      Buffer.concat([Buffer.from(`${mode} ${name}\0`, 'utf8'), Buffer.from(oid, 'hex')]),
    ),
  );
  const env = isolatedGitEnv({ GIT_DIR: repo.path });
  return (
    await run('git', ['hash-object', '-w', '-t', 'tree', '--literally', '--stdin'], { env, input: content })
  ).stdout.trim();
}

/** A commit of `tree`, made reachable as branch `branch` so the server sends it. */
export async function commitOf(repo: MadeRepo, tree: string, branch: string): Promise<string> {
  const env = isolatedGitEnv({
    GIT_DIR: repo.path,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@example.com',
    GIT_AUTHOR_DATE: '1700000000 +0000',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@example.com',
    GIT_COMMITTER_DATE: '1700000000 +0000',
  });
  const commit = (await run('git', ['commit-tree', tree, '-m', branch], { env })).stdout.trim();
  await run('git', ['update-ref', `refs/heads/${branch}`, commit], { env });
  return commit;
}
