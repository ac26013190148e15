import { randomBytes } from 'node:crypto';
import { cp, lstat, mkdir, readlink, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { skillNameProblem } from '../entries/index.js';
import { SkillLinkConflictError, SkillLinkError, SkillLinkNameInvalidError } from '../errors.js';
import type { PreparedSkill } from '../prepare/prepare.js';

/** How `linkSkills` places each skill. */
export interface LinkSkillsOptions {
  /**
   * Copy each skill's files into `dir/<name>` instead of linking to the store: for agents or
   * containers that cannot follow a link out of the folder. A copy holds a marker file,
   * `.agentproto-copy`, by which a later run knows it may replace it. False by default.
   */
  copy?: boolean;
}

/** What `linkSkills` did for one skill. */
export interface LinkedSkill {
  /** The skill's installed name: the entry's name in `dir`. */
  name: string;
  /** `dir/<name>`. */
  path: string;
  /** A symbolic link to the prepared skill's directory, or a copy of its files. */
  kind: 'link' | 'copy';
  /** Whether it replaced an earlier link or copy of its own (false when the name was free). */
  replaced: boolean;
}

/** The file a copy holds so that a later run recognizes it as its own. */
const COPY_MARKER = '.agentproto-copy';

type Found = { state: 'absent' } | { state: 'own-link' } | { state: 'own-copy' } | { state: 'foreign'; found: string };

/** Seams for tests: run between the check of a path and the change that commits it. */
export interface LinkHooks {
  beforeCommit?: (path: string) => Promise<void> | void;
}

/**
 * Makes each prepared skill visible to agents as `dir/<name>` (`.claude/skills`,
 * `.agents/skills`, …): a symbolic link to its directory in the store (`prepared.dir`), or
 * with `copy` a copy of its files. `dir` is created if missing.
 *
 * It replaces only what it made: a link pointing into the same store's declaration links,
 * or a copy holding its marker. Anything else at `dir/<name>` (a file, a folder, a link
 * elsewhere) is refused, before anything is changed, and left untouched. A new name is
 * created with `symlink` (or a `rename` of a finished copy), which fail when the name
 * appears meanwhile; a link of its own is replaced by renaming a fresh link over it, which
 * fails if a folder took its place. A name is a single path segment by the Agent Skills
 * rule (`a-z 0-9 -`), checked first.
 *
 * @example
 * const skills = await prepareSkills(declaration, { cache });
 * await linkSkills(skills, '.claude/skills');              // .claude/skills/review -> <store>/links/…
 * await linkSkills(skills, 'image/skills', { copy: true }); // image/skills/review/SKILL.md, …
 *
 * @throws {SkillLinkNameInvalidError} `SKILL_LINK_NAME_INVALID`: a name that is not a safe single segment, or given twice; nothing changed.
 * @throws {SkillLinkConflictError} `SKILL_LINK_CONFLICT`, naming the path: something it did not create is there, or appeared while it worked; that path is untouched.
 * @throws {SkillLinkError} `SKILL_LINK_FAILED`: `dir` cannot be written, or a prepared directory is gone.
 */
export async function linkSkills(
  prepared: readonly Pick<PreparedSkill, 'name' | 'dir'>[],
  dir: string,
  options: LinkSkillsOptions = {},
): Promise<LinkedSkill[]> {
  return linkSkillsWith(prepared, dir, options, {});
}

/** linkSkills, with seams for tests. */
export async function linkSkillsWith(
  prepared: readonly Pick<PreparedSkill, 'name' | 'dir'>[],
  dir: string,
  options: LinkSkillsOptions,
  hooks: LinkHooks,
): Promise<LinkedSkill[]> {
  const seen = new Set<string>();
  for (const { name } of prepared) {
    const problem = typeof name === 'string' ? skillNameProblem(name) : 'is not a string';
    if (problem !== undefined) throw new SkillLinkNameInvalidError(String(name), problem);
    if (seen.has(name)) throw new SkillLinkNameInvalidError(name, 'is given twice');
    seen.add(name);
  }
  const folder = resolve(dir);
  await io(folder, 'cannot create the folder', () => mkdir(folder, { recursive: true }));
  // Every path is checked before any is changed: a conflict leaves the whole folder as it was.
  const plans = [];
  for (const skill of prepared) {
    const path = join(folder, skill.name);
    const target = resolve(skill.dir);
    const found = await inspect(path, target);
    if (found.state === 'foreign') throw new SkillLinkConflictError(path, found.found);
    plans.push({ name: skill.name, path, target, found });
  }
  const linked: LinkedSkill[] = [];
  for (const plan of plans) {
    const kind = options.copy ? 'copy' : 'link';
    await place(plan.path, plan.target, kind, plan.found, hooks);
    linked.push({ name: plan.name, path: plan.path, kind, replaced: plan.found.state !== 'absent' });
  }
  return linked;
}

/**
 * What is at `path`: nothing, a link of ours (into the store's declaration links, the
 * folder `target` is in), a copy of ours (a real folder holding the marker), or something else.
 */
async function inspect(path: string, target: string): Promise<Found> {
  const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new SkillLinkError(path, `cannot be examined (${error.code ?? error.message})`, { cause: error });
  });
  if (!stats) return { state: 'absent' };
  if (stats.isSymbolicLink()) {
    const to = await readlink(path).catch(() => '');
    return isOwnLinkTarget(to, target)
      ? { state: 'own-link' }
      : { state: 'foreign', found: 'a symbolic link to elsewhere' };
  }
  if (stats.isDirectory()) {
    const marker = await lstat(join(path, COPY_MARKER)).catch(() => undefined);
    return marker?.isFile() ? { state: 'own-copy' } : { state: 'foreign', found: 'a folder' };
  }
  return { state: 'foreign', found: stats.isFile() ? 'a file' : 'a special file' };
}

/** A link this function made: absolute, to a declaration link beside `target` in the same store. */
function isOwnLinkTarget(to: string, target: string): boolean {
  return to.startsWith('/') && dirname(to) === dirname(target) && /^[0-9a-f]{64}$/.test(basename(to));
}

async function place(path: string, target: string, kind: 'link' | 'copy', found: Found, hooks: LinkHooks) {
  const temp = join(dirname(path), `.${basename(path)}.tmp-${randomBytes(6).toString('hex')}`);
  try {
    if (kind === 'copy') await makeCopy(target, temp);
    else if (found.state === 'own-link') await io(temp, 'cannot create a link', () => symlink(target, temp));
    await hooks.beforeCommit?.(path);
    if (found.state === 'own-copy' || (found.state === 'own-link' && kind === 'copy')) await moveAway(path, target);
    if (kind === 'link' && found.state === 'own-link') {
      // rename(2) replaces a link atomically; over a folder that took its place it fails.
      await commit(path, () => rename(temp, path));
    } else if (kind === 'link') {
      // symlink(2) never replaces anything: a name that appeared meanwhile stays as it is.
      await commit(path, () => symlink(target, path));
    } else {
      // A finished copy arrives by one rename, which fails over a file, a link or a folder with files.
      await commit(path, () => rename(temp, path));
    }
  } finally {
    await rm(temp, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function makeCopy(target: string, temp: string): Promise<void> {
  const real = await io(target, 'the prepared directory cannot be read', () => realpath(target));
  // Links inside a skill stay links (the store checked that they resolve inside it).
  await io(temp, 'cannot copy the skill', () =>
    cp(real, temp, { recursive: true, verbatimSymlinks: true, errorOnExist: true, force: false }),
  );
  await io(temp, 'cannot write the copy marker', () =>
    writeFile(join(temp, COPY_MARKER), `${JSON.stringify({ copiedFrom: target })}\n`, { flag: 'wx' }),
  );
}

/**
 * Takes an own entry out of the way before a copy replaces it (or a link replaces a copy):
 * renamed aside, checked to be still its own, then removed. What took its place meanwhile
 * is not removed: the error names where it was set aside.
 */
async function moveAway(path: string, target: string): Promise<void> {
  const aside = join(dirname(path), `.${basename(path)}.old-${randomBytes(6).toString('hex')}`);
  await commit(path, () => rename(path, aside));
  const still = await inspect(aside, target);
  if (still.state !== 'own-link' && still.state !== 'own-copy') {
    throw new SkillLinkConflictError(
      path,
      `${still.state === 'foreign' ? still.found : 'nothing'} appeared while linking (set aside as ${basename(aside)})`,
    );
  }
  await rm(aside, { recursive: true, force: true });
}

const RACE_CODES = new Set(['EEXIST', 'ENOTEMPTY', 'EISDIR', 'ENOTDIR', 'ENOENT']);

/** Runs a committing change; a name that changed under it is a conflict, anything else a failure. */
async function commit(path: string, change: () => Promise<void>): Promise<void> {
  try {
    await change();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code && RACE_CODES.has(code)) {
      throw new SkillLinkConflictError(path, 'something appeared or changed there while linking', { cause: error });
    }
    throw new SkillLinkError(path, `cannot be written (${code ?? 'error'})`, { cause: error });
  }
}

async function io<T>(path: string, what: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw new SkillLinkError(path, `${what} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { cause: error });
  }
}
