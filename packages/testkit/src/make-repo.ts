import { access, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { storeBlobs } from './blob-pack.js';
import { fastImport, fastImportPath, writeData, type FastImportWriter } from './fast-import.js';
import { assertRepoPath, fileEntry, type FileTree } from './file-tree.js';
import { isolatedGitEnv } from './git-env.js';
import { run } from './run.js';

/**
 * A commit of the spec: a commit index (0-based, into `commits`), a branch name (its tip
 * once the commits are made), or a full 40-hex SHA.
 */
export type CommitRef = number | string;

export interface CommitSpec {
  /** Branch the commit goes on; `main` by default. */
  branch?: string;
  /** Commit message; `commit <index>` by default. A final newline is added, as `git commit` does. */
  message?: string;
  /** Files to add or overwrite, relative to the repository root. */
  files?: FileTree;
  /** Files or whole folders to delete before `files` are written. */
  remove?: string[];
  /** Start from an empty tree instead of the parent's (the parent stays the parent). */
  replaceTree?: boolean;
  /**
   * The parent. By default the branch's current tip; for a branch's first commit, the tip
   * of the default branch (`head`) if it has one yet. `null` makes a root commit. Setting
   * it on an existing branch moves the branch, as a force-push would.
   */
  from?: CommitRef | null;
  /** Extra parents, making a merge commit. The tree is still the parent's plus `files`/`remove`. */
  merge?: CommitRef[];
  /** Author and committer time in Unix seconds; by default a fixed epoch plus one minute per commit. */
  time?: number;
}

export interface TagSpec {
  name: string;
  target: CommitRef;
  /** An annotated tag object (peeled with `^{}`) instead of a plain ref; false by default. */
  annotated?: boolean;
  /** Message of an annotated tag; the tag name by default. */
  message?: string;
}

export interface BranchSpec {
  name: string;
  from: CommitRef;
}

export interface RepoSpec {
  /** Folder to create the bare repository in; created if missing. */
  root: string;
  /** Folder name of the bare repository, e.g. `skills.git`; may contain `/` (`org/skills.git`). */
  name: string;
  /** Commits in the order they are made. */
  commits: CommitSpec[];
  /** Branches pointed at existing commits after all commits are made. */
  branches?: BranchSpec[];
  /** Tags, made last; a branch and a tag may share a name. */
  tags?: TagSpec[];
  /** Branch HEAD points at (what a clone checks out); `main` by default. */
  head?: string;
  /** Author, committer and tagger; `Testkit <testkit@example.com>` by default. */
  identity?: { name: string; email: string };
}

export interface MadeRepo {
  /** Absolute path of the bare repository. */
  path: string;
  name: string;
  /** Full SHAs of `spec.commits`, in order. */
  commits: string[];
  /** SHA of a branch's tip; the HEAD branch by default. Throws for an unknown branch. */
  head(branch?: string): string;
  /** Every ref as a client sees it (`git ls-remote`): `HEAD`, `refs/heads/*`, `refs/tags/*` and peeled `refs/tags/x^{}`. */
  refs(): Promise<Record<string, string>>;
  /**
   * Tree id of a folder at a commit (`git rev-parse <commit>:<dir>`); the root tree when
   * `dir` is empty. `commit` is a commit index, a branch, or anything rev-parse takes.
   */
  treeOf(commit: CommitRef, dir?: string): Promise<string>;
  /** Runs git in the repository with the isolated environment and returns stdout. */
  git(...args: string[]): Promise<string>;
}

/** Fixed so that the same spec gives the same SHAs on every machine and every run. */
const EPOCH = 1_700_000_000;
const DEFAULT_IDENTITY = { name: 'Testkit', email: 'testkit@example.com' };

/**
 * Builds a real bare repository from a declarative spec: deterministic (fixed identity
 * and dates, no user config, so the same spec gives the same SHAs everywhere) and fast
 * enough for generated trees of tens of thousands of files (blobs are written as one pack,
 * then one `git fast-import` run makes the trees, commits, branches and tags).
 *
 * Commits are made in order. Each starts from its branch's tip (files not mentioned stay),
 * applies `remove`, then `files`. Then `branches` are pointed, then `tags` made. Branch,
 * tag and commit names are plain names (`main`, `v1`), not `refs/…` paths.
 *
 * ```ts
 * const repo = await makeRepo({
 *   root, name: 'skills.git',
 *   commits: [
 *     { message: 'first', files: {
 *       'skills/a/SKILL.md': '---\nname: a\n---\n',
 *       'bin/run.sh': { content: '#!/bin/sh\necho hi\n', mode: 0o755 },
 *       'skills/a/link': { symlink: '../a/SKILL.md' },
 *     } },
 *     { branch: 'dev', files: { 'skills/b/SKILL.md': '---\nname: b\n---\n' } }, // branches off main
 *     { message: 'drop a', remove: ['skills/a'] },                               // on main again
 *   ],
 *   branches: [{ name: 'release', from: 0 }],
 *   tags: [{ name: 'v1', target: 'main', annotated: true }, { name: 'dev', target: 'dev' }],
 * });
 * ```
 */
export async function makeRepo(spec: RepoSpec): Promise<MadeRepo> {
  const path = join(spec.root, spec.name);
  const env = deterministicEnv(spec.identity ?? DEFAULT_IDENTITY);
  // Paths are checked before anything is written, so a bad spec leaves nothing behind.
  const files = spec.commits.map((commit) => treeEntries(commit.files ?? {}));
  await assertAbsent(path);
  await mkdir(spec.root, { recursive: true });
  const plan = new ImportPlan(spec, files);
  let commits: string[];
  try {
    commits = await importRepo(path, env, plan, files);
  } catch (error) {
    await rm(path, { recursive: true, force: true });
    throw error;
  }

  const headBranch = plan.headBranch();
  const tips = plan.branchTips(commits);
  const git = async (...args: string[]) => (await run('git', args, { env: { ...env, GIT_DIR: path } })).stdout;

  return {
    path,
    name: spec.name,
    commits,
    head(branch = headBranch) {
      const sha = branch === undefined ? undefined : tips.get(branch);
      if (!sha) throw new Error(`no branch ${branch} in ${spec.name}`);
      return sha;
    },
    refs: async () => parseLsRemote(await git('ls-remote', path)),
    treeOf: async (commit, dir = '') => {
      const sha = typeof commit === 'number' ? commits[commit] : (tips.get(commit) ?? commit);
      if (!sha) throw new Error(`no commit ${commit} in ${spec.name}`);
      const folder = dir.replace(/^\/+|\/+$/g, '');
      return (await git('rev-parse', '--verify', folder === '' ? `${sha}^{tree}` : `${sha}:${folder}`)).trim();
    },
    git,
  };
}

async function importRepo(
  path: string,
  env: NodeJS.ProcessEnv,
  plan: ImportPlan,
  files: TreeEntry[][],
): Promise<string[]> {
  await run('git', ['-c', 'init.defaultBranch=main', 'init', '-q', '--bare', path], { env });
  const entries = files.flat();
  const blobIds = await storeBlobs(
    path,
    entries.map((entry) => entry.data),
  );
  for (const [index, entry] of entries.entries()) entry.sha = blobIds[index]!;
  const output = await fastImport(path, env, (writer) => plan.write(writer));
  const commits = output.split('\n').filter((line) => /^[0-9a-f]{40}$/.test(line));
  if (commits.length !== plan.commitCount)
    throw new Error(`fast-import reported ${commits.length} marks for ${plan.commitCount} commits`);
  const headBranch = plan.headBranch();
  if (headBranch)
    await run('git', ['symbolic-ref', 'HEAD', `refs/heads/${headBranch}`], { env: { ...env, GIT_DIR: path } });
  return commits;
}

interface TreeEntry {
  path: string;
  mode: '100644' | '100755' | '120000';
  data: Uint8Array;
  /** Blob id, once stored. */
  sha: string;
}

function treeEntries(files: FileTree): TreeEntry[] {
  return Object.entries(files).map(([path, value]) => {
    assertRepoPath(path);
    const entry = fileEntry(value);
    if (entry.kind === 'symlink') return { path, mode: '120000', data: Buffer.from(entry.target, 'utf8'), sha: '' };
    return { path, mode: entry.executable ? '100755' : '100644', data: entry.content, sha: '' };
  });
}

/**
 * Turns the spec into a fast-import stream of trees, commits, branches and tags (the blobs
 * are already stored), tracking which mark each branch points at.
 */
class ImportPlan {
  /** Branch name → fast-import dataref (`:mark` or SHA) of its tip. */
  private readonly tips = new Map<string, string>();
  private readonly identity: { name: string; email: string };
  private readonly defaultBranch: string;

  constructor(
    private readonly spec: RepoSpec,
    private readonly files: TreeEntry[][],
  ) {
    this.identity = spec.identity ?? DEFAULT_IDENTITY;
    this.defaultBranch = spec.head ?? 'main';
  }

  async write(writer: FastImportWriter): Promise<void> {
    for (const [index, commit] of this.spec.commits.entries()) await this.writeCommit(writer, index, commit);
    for (const branch of this.spec.branches ?? []) {
      const from = this.resolve(branch.from, this.spec.commits.length);
      this.tips.set(branch.name, from);
      await writer.text(`reset refs/heads/${checkRefName(branch.name)}\nfrom ${from}\n\n`);
    }
    for (const [index, tag] of (this.spec.tags ?? []).entries()) await this.writeTag(writer, index, tag);
    // Answers come back on stdout, one SHA per line, in commit order.
    for (let mark = 1; mark <= this.spec.commits.length; mark += 1) await writer.text(`get-mark :${mark}\n`);
  }

  get commitCount(): number {
    return this.spec.commits.length;
  }

  /** The branch HEAD names: `spec.head` (even if no commit made it), else `main`, else the first branch made. */
  headBranch(): string | undefined {
    if (this.tips.has(this.defaultBranch)) return this.defaultBranch;
    return this.spec.head ?? this.tips.keys().next().value;
  }

  branchTips(commits: string[]): Map<string, string> {
    const shas = new Map<string, string>();
    for (const [branch, ref] of this.tips)
      shas.set(branch, ref.startsWith(':') ? commits[Number(ref.slice(1)) - 1]! : ref);
    return shas;
  }

  private async writeCommit(writer: FastImportWriter, index: number, commit: CommitSpec): Promise<void> {
    const branch = checkRefName(commit.branch ?? 'main');
    const parent = this.parentOf(commit, branch, index);
    const time = commit.time ?? EPOCH + index * 60;
    const who = `${this.identity.name} <${this.identity.email}> ${time} +0000`;
    await writer.text(`commit refs/heads/${branch}\nmark :${index + 1}\nauthor ${who}\ncommitter ${who}\n`);
    await writeData(writer, Buffer.from(withFinalNewline(commit.message ?? `commit ${index}`), 'utf8'));
    if (parent) await writer.text(`from ${parent}\n`);
    for (const extra of commit.merge ?? []) await writer.text(`merge ${this.resolve(extra, index)}\n`);
    if (commit.replaceTree) await writer.text('deleteall\n');
    for (const path of commit.remove ?? []) {
      assertRepoPath(path);
      await writer.text(`D ${fastImportPath(path)}\n`);
    }
    for (const entry of this.files[index] ?? [])
      await writer.text(`M ${entry.mode} ${entry.sha} ${fastImportPath(entry.path)}\n`);
    await writer.text('\n');
    this.tips.set(branch, `:${index + 1}`);
  }

  // fast-import needs `from` on a branch's first commit to branch off; later commits on the
  // same branch would follow its tip anyway, but an explicit `from` keeps the stream obvious.
  private parentOf(commit: CommitSpec, branch: string, index: number): string | undefined {
    if (commit.from === null) {
      if (this.tips.has(branch))
        throw new Error(`commit ${index}: from: null on existing branch ${branch}; use a new branch for a root commit`);
      return undefined;
    }
    if (commit.from !== undefined) return this.resolve(commit.from, index);
    return this.tips.get(branch) ?? this.tips.get(this.defaultBranch);
  }

  private async writeTag(writer: FastImportWriter, index: number, tag: TagSpec): Promise<void> {
    const target = this.resolve(tag.target, this.spec.commits.length);
    const name = checkRefName(tag.name);
    if (!tag.annotated) {
      await writer.text(`reset refs/tags/${name}\nfrom ${target}\n\n`);
      return;
    }
    const time = EPOCH + (this.spec.commits.length + index) * 60;
    await writer.text(
      `tag ${name}\nfrom ${target}\ntagger ${this.identity.name} <${this.identity.email}> ${time} +0000\n`,
    );
    // No blank line after a tag's data: unlike commit and reset, fast-import rejects it there.
    await writeData(writer, Buffer.from(withFinalNewline(tag.message ?? name), 'utf8'));
  }

  /** A CommitRef as a fast-import dataref; `before` bounds indexes to commits already made. */
  private resolve(ref: CommitRef, before: number): string {
    if (typeof ref === 'number') {
      if (!Number.isInteger(ref) || ref < 0 || ref >= before)
        throw new Error(`commit index ${ref} does not name an earlier commit`);
      return `:${ref + 1}`;
    }
    const branch = this.tips.get(ref.replace(/^refs\/heads\//, ''));
    if (branch) return branch;
    if (/^[0-9a-f]{40}$/.test(ref)) return ref;
    throw new Error(
      `unknown commit ref ${JSON.stringify(ref)}: use a commit index, a branch made earlier, or a full SHA`,
    );
  }
}

function deterministicEnv(identity: { name: string; email: string }): NodeJS.ProcessEnv {
  const date = `${EPOCH} +0000`;
  return isolatedGitEnv({
    GIT_AUTHOR_NAME: identity.name,
    GIT_AUTHOR_EMAIL: identity.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: identity.name,
    GIT_COMMITTER_EMAIL: identity.email,
    GIT_COMMITTER_DATE: date,
  });
}

/** `git ls-remote` lines (`<sha>\t<ref>`) as a record. */
export function parseLsRemote(output: string): Record<string, string> {
  const refs: Record<string, string> = {};
  for (const line of output.split('\n')) {
    const [sha, ref] = line.split('\t');
    if (sha && ref) refs[ref] = sha;
  }
  return refs;
}

// Names go into fast-import command lines verbatim; refuse what git would refuse anyway,
// plus whitespace, so a typo fails here with a clear message.
function checkRefName(name: string): string {
  const bad = /[\s~^:?*[\\\0]|\.\.|@\{|^\/|\/$|\/\/|\.lock$|^\.|\/\.|^-|^@$/.test(name);
  if (name === '' || bad) throw new Error(`invalid branch or tag name ${JSON.stringify(name)}`);
  return name;
}

function withFinalNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

async function assertAbsent(path: string): Promise<void> {
  const exists = await access(path).then(
    () => true,
    () => false,
  );
  if (exists) throw new Error(`${path} already exists; makeRepo builds new repositories only`);
}
