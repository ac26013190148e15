import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { NotInsideError, copyInside } from '@agentproto/fs-inside';
import { hashTree, nodeStoreFs } from '@agentproto/content-cache';
import { BaseSkillProvider } from '../base-provider.js';
import { SkillConfigError, SkillError } from '../errors.js';
import type { FetchContext, ProviderContext, ResolvedSkillSource, SkillSource } from '../provider.js';

export interface LocalProviderOptions {
  /**
   * Folders sources must lie in (after resolving links). Without it any absolute folder is
   * allowed: fine for development and tests, not for agent configuration you do not trust.
   */
  roots?: readonly string[];
}

/** `*` takes whatever is on disk now; `sha256:<hex>` pins the tree digest. */
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * Skills from a folder on this machine, for development and tests. The version and the
 * content id are both the tree digest of the selected directory (as the content store
 * computes it), so an unchanged folder is a cache hit and an edited one a new version.
 */
export class LocalSkillProvider extends BaseSkillProvider {
  readonly id = 'local';
  private readonly roots: readonly string[] | undefined;

  constructor(options: LocalProviderOptions = {}) {
    super();
    this.roots = options.roots;
  }

  validate(source: SkillSource): void {
    if (!isAbsolute(source.source))
      throw new SkillConfigError(source.source, 'source', 'must be an absolute folder path');
    for (const option of Object.keys(source.config))
      throw new SkillConfigError(source.source, option, 'is not an option of the local provider');
    if (source.version !== '*' && !DIGEST.test(source.version)) {
      throw new SkillConfigError(source.source, 'version', 'must be "*" or a tree digest "sha256:<64 hex>"');
    }
  }

  egressHosts(): string[] {
    return [];
  }

  async resolve(source: SkillSource, context: ProviderContext): Promise<ResolvedSkillSource> {
    context.signal.throwIfAborted();
    const { base, directory } = await this.directoryOf(source);
    const { digest } = await insideSource(source, () =>
      hashTree(directory, nodeStoreFs, { within: base, skipDotGit: true }),
    );
    if (source.version !== '*' && source.version !== digest) {
      throw new LocalVersionMismatchError(source.source, source.version, digest);
    }
    return { version: digest, contentId: digest };
  }

  async fetch(source: SkillSource, resolved: ResolvedSkillSource, context: FetchContext): Promise<void> {
    context.signal.throwIfAborted();
    const { base, rel } = await this.directoryOf(source);
    // The folder belongs to someone who may swap its folders for links while it is copied:
    // every folder and file is opened first and proven inside the source folder, and copied
    // from that descriptor (content-cache copyInside). Links are copied as links; the store then checks
    // that they stay inside the tree, and strips special mode bits. A skill folder may be a
    // git checkout: its `.git` (any spelling git refuses) is left out of both the copy and
    // the digest, since a store never holds one (it would run its owner's core.fsmonitor on
    // `git status` in the published folder).
    await insideSource(source, () =>
      copyInside(base, rel, context.destination, { signal: context.signal, skipDotGit: true }),
    );
    const { digest } = await hashTree(context.destination);
    // The folder may have changed between resolve and fetch; publish only what was resolved.
    if (digest !== resolved.contentId) throw new LocalVersionMismatchError(source.source, resolved.contentId, digest);
  }

  /**
   * The proof for a tree from the store's shared remote tier: the content id is the tree
   * digest itself, so the tree must hash to it. (A digest taken of a folder whose modes the
   * store then normalises differs; such a tree is simply copied from the folder again.)
   */
  async verifyTree(tree: string, resolved: ResolvedSkillSource, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const { digest } = await hashTree(tree);
    if (digest !== resolved.contentId) throw new LocalVersionMismatchError(tree, resolved.contentId, digest);
  }

  /**
   * The selected directory, which must stay inside the source and inside an allowed root:
   * `base` is the source's real path, `rel` the directory below it. This is a check by name,
   * to refuse early and clearly; what is read is proven inside `base` again, by descriptor.
   */
  private async directoryOf(source: SkillSource): Promise<{ base: string; rel: string; directory: string }> {
    const base = await realpath(source.source).catch((error: unknown) => {
      throw new LocalSourceNotFoundError(source.source, undefined, 'cannot be read', error);
    });
    if (this.roots && !(await this.insideRoots(base))) {
      throw new SkillConfigError(source.source, 'source', 'is outside the folders this host allows');
    }
    const directory = await realpath(join(base, ...(source.path ? source.path.split('/') : []))).catch(
      (error: unknown) => {
        throw new LocalSourceNotFoundError(source.source, source.path, 'cannot be read', error);
      },
    );
    if (!inside(base, directory))
      throw new SkillConfigError(source.source, 'path', 'leaves the source folder through a link');
    if (!(await stat(directory)).isDirectory())
      throw new LocalSourceNotFoundError(source.source, source.path, 'is not a folder');
    return { base, rel: relative(base, directory).split(sep).join('/'), directory };
  }

  private async insideRoots(path: string): Promise<boolean> {
    for (const root of this.roots ?? []) {
      const real = await realpath(root).catch(() => undefined);
      if (real && inside(real, path)) return true;
    }
    return false;
  }
}

/**
 * The source folder, or the selected directory in it, cannot be read or is not a folder.
 * `path` is undefined when the source folder itself is at fault.
 */
export class LocalSourceNotFoundError extends SkillError {
  declare readonly code: 'SKILL_NOT_FOUND';
  constructor(
    readonly source: string,
    readonly path: string | undefined,
    readonly problem: 'cannot be read' | 'is not a folder',
    cause?: unknown,
  ) {
    super(
      'SKILL_NOT_FOUND',
      path === undefined ? `local source ${source} ${problem}` : `local source ${source}: "${path}" ${problem}`,
      cause === undefined ? undefined : { cause },
    );
  }
}

/** The folder's digest is not the one pinned (or it changed during the fetch). */
export class LocalVersionMismatchError extends SkillError {
  declare readonly code: 'SKILL_VERSION_MISMATCH';
  constructor(
    readonly source: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super('SKILL_VERSION_MISMATCH', `local source ${source}: expected tree ${expected}, found ${actual}`);
  }
}

/**
 * The source folder changed while it was read (a folder swapped for a link out of it, a file
 * replaced): the message names the source and the path inside it, nothing of where a link led.
 */
export class LocalSourceChangedError extends SkillError {
  declare readonly code: 'SKILL_SOURCE_CHANGED';
  constructor(
    readonly source: string,
    readonly path: string,
    cause: unknown,
  ) {
    super(
      'SKILL_SOURCE_CHANGED',
      `local source ${source}: ${JSON.stringify(path)} changed while it was read, or leads out of the source folder`,
      { cause },
    );
  }
}

/** Runs a proven read of a source folder; a refusal becomes LocalSourceChangedError. */
async function insideSource<T>(source: SkillSource, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof NotInsideError) throw new LocalSourceChangedError(source.source, error.path ?? '', error);
    throw error;
  }
}

function inside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

export function localProvider(options: LocalProviderOptions = {}): LocalSkillProvider {
  return new LocalSkillProvider(options);
}
