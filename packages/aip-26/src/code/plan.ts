import { DocumentError } from '@agentproto/documents';
import { SourceResolutionError } from './errors.js';
import { safePath, safeWorkspacePath } from './path-rules.js';
import { validateCode } from './validate.js';
import { loadGit } from '../github/lazy.js';
import { WorkspaceLinkError, WorkspaceManifestError } from '../workspace/node-workspace-fs.js';
import type { Code, Source, WorkspaceFs } from './types.js';
import { PATH_LIMITS } from '../paths/limits.js';

/** GitHub owners: letters, digits, single hyphens; repository names: letters, digits, `.`, `_`, `-`. */
const GITHUB_REPO = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}\/[A-Za-z0-9._-]{1,100}$/;

/**
 * A ref is a full lowercase commit or a branch/tag name git would accept. A short hex name
 * (`cafe1234`) is NOT refused here: the spec's table makes anything but a full commit a ref
 * to resolve, and it may well be a branch; the connector asks the server's refs first and
 * only then takes it as an abbreviated commit. 40 hex digits with upper case are refused:
 * git reads 40 hex digits as an object id in either case, and git never creates such refs.
 */
async function checkGithubRef(ref: string, label: string, source: Source): Promise<void> {
  const bad = (detail: string): never => {
    throw new SourceResolutionError(label, source, 'ref-unresolved', `ref ${JSON.stringify(ref)}: ${detail}`);
  };
  if (/^[0-9a-fA-F]{40}$/.test(ref) && ref !== ref.toLowerCase())
    bad(`a commit id must be lowercase (${ref.toLowerCase()})`);
  const problem = (await loadGit()).refNameProblem(ref);
  if (problem) bad(problem);
}

/** How deep `ref` sources may nest (ADAPTER.md recommends a bound; 5 is its example). */
const MAX_REF_DEPTH = 5;

export type PlannedSource =
  | { kind: 'inline'; label: string; declaration: Source; path: string; content: string }
  | {
      kind: 'local';
      label: string;
      declaration: Source;
      /** Where the files are read: the workspace path, joined to the manifest's folder. */
      path: string;
      /**
       * Where they land when `as` is absent: the path as the manifest wrote it, relative to
       * its own folder (the spec's "`as` default = same as `path`"). Equal to `path` except
       * in a lean CODE.md, whose `source: { local: ./search.py }` lands at `search.py`.
       */
      declaredPath: string;
      directory: boolean;
      as: string | undefined;
      glob: string | undefined;
    }
  | {
      kind: 'github';
      label: string;
      declaration: Source;
      repo: string;
      ref: string;
      path: string;
      as: string | undefined;
    };

/** A code-workspace a `ref` led to, with the blocks a referencing manifest inherits. */
export interface ReferencedWorkspace {
  path: string;
  manifest: Record<string, unknown>;
  /**
   * How far down the `ref` chain it was reached: 1 for a `ref` of the manifest itself, 2 for
   * a `ref` of that code-workspace, and so on. With the depth-first order of
   * `CodePlan.workspaces`, this is the tree `inheritBlocks` folds (who references whom).
   */
  depth: number;
}

export interface CodePlan {
  sources: PlannedSource[];
  /** Every code-workspace reached through `ref`, depth-first (a workspace before those it references). */
  workspaces: ReferencedWorkspace[];
}

/**
 * `code: <path>` is one `ref` source. Public, so a host may call it on a block it has not
 * validated: the schema check comes first, and a malformed block is ManifestValidationError,
 * not a TypeError from reading `sources` of something that is not an object.
 */
export function desugarCode(code: Code): Source[] {
  validateCode(code);
  return sourcesOfBlock(code);
}

/** The sources of a block already validated. */
function sourcesOfBlock(code: Code): Source[] {
  return typeof code === 'string' ? [{ ref: code }] : code.sources;
}

/**
 * Checks every path of every source and walks the `ref` chain, reading only manifests:
 * cycles, depth and unsafe paths are refused before any source content is read. Paths in a
 * referenced code-workspace are relative to its folder (as `source: { local: ./search.py }`
 * in a lean CODE.md means), and must still stay inside the workspace.
 */
export async function planCode(code: Code, fs: WorkspaceFs): Promise<CodePlan> {
  // A host may plan before anything else (to fold inherited blocks, say): the block is
  // checked against the schema first, so a malformed one is ManifestValidationError, never
  // a TypeError from reading a field that is not there.
  validateCode(code);
  const plan: CodePlan = { sources: [], workspaces: [] };
  await planSources(sourcesOfBlock(code), '', '', [], fs, plan);
  return plan;
}

async function planSources(
  sources: Source[],
  base: string,
  prefix: string,
  chain: string[],
  fs: WorkspaceFs,
  plan: CodePlan,
): Promise<void> {
  for (const [index, source] of sources.entries()) {
    const label = `${prefix}sources[${index}]`;
    const planned = await planOne(source, label, base);
    if (planned) {
      plan.sources.push(planned);
      continue;
    }
    const refPath = refPathOf(source, label, base);
    if (chain.includes(refPath)) {
      throw new SourceResolutionError(
        label,
        source,
        'cycle',
        `ref cycle: ${[...chain, refPath].map((p) => JSON.stringify(p)).join(' → ')}`,
      );
    }
    if (chain.length + 1 > MAX_REF_DEPTH) {
      throw new SourceResolutionError(
        label,
        source,
        'too-deep',
        `ref chain deeper than ${MAX_REF_DEPTH}: ${[...chain, refPath].map((p) => JSON.stringify(p)).join(' → ')}`,
      );
    }
    const manifest = await readWorkspaceManifest(fs, refPath, label, source);
    plan.workspaces.push({ path: refPath, manifest, depth: chain.length + 1 });
    // Rich manifests use workspace-relative paths (the spec's path table); a lean CODE.md's
    // paths are relative to its own folder (its example: `source: { local: ./search.py }`).
    const nestedBase = manifest.kind === 'code-workspace' ? '' : refPath;
    await planSources(
      sourcesOf(manifest, label, source),
      nestedBase,
      `${label} → ref ${JSON.stringify(refPath)} → `,
      [...chain, refPath],
      fs,
      plan,
    );
  }
}

async function planOne(source: Source, label: string, base: string): Promise<PlannedSource | undefined> {
  const guard = <T>(run: () => T): T => {
    try {
      return run();
    } catch (error) {
      throw new SourceResolutionError(
        label,
        source,
        'unsafe-path',
        error instanceof Error ? error.message : String(error),
        { cause: error },
      );
    }
  };
  if ('inline' in source) {
    const { path, content } = source.inline;
    if (content.includes('\0'))
      throw new SourceResolutionError(label, source, 'nul-in-content', 'inline content must not contain NUL bytes');
    return {
      kind: 'inline',
      label,
      declaration: source,
      path: guard(() => safePath('inline.path', path).path),
      content,
    };
  }
  if ('local' in source) {
    const spec = typeof source.local === 'string' ? { path: source.local } : source.local;
    const declared = guard(() => safeWorkspacePath('local.path', spec.path, ''));
    const path = guard(() => safeWorkspacePath('local.path', spec.path, base));
    const as = spec.as === undefined ? undefined : guard(() => asTarget(safePath('local.as', spec.as!)));
    // A glob matches paths, so it is no longer than a path may be; minimatch would refuse a
    // longer one (past 64 KiB) with a bare TypeError, after the plan had accepted it.
    if (spec.glob !== undefined && Buffer.byteLength(spec.glob) > PATH_LIMITS.maxBytes) {
      throw new SourceResolutionError(
        label,
        source,
        'unsafe-path',
        `local.glob is longer than ${PATH_LIMITS.maxBytes} bytes`,
      );
    }
    return {
      kind: 'local',
      label,
      declaration: source,
      path: path.path,
      declaredPath: declared.path,
      directory: path.directory,
      as,
      glob: spec.glob,
    };
  }
  if ('github' in source) {
    const { repo, ref, path, as } = source.github;
    if (!GITHUB_REPO.test(repo) || repo.split('/').some((part) => part === '.' || part === '..')) {
      throw new SourceResolutionError(
        label,
        source,
        'invalid-repo',
        `repo ${JSON.stringify(repo)} is not owner/name with GitHub's characters`,
      );
    }
    await checkGithubRef(ref, label, source);
    return {
      kind: 'github',
      label,
      declaration: source,
      repo,
      ref,
      path: path === undefined ? '' : guard(() => safePath('github.path', path).path),
      as: as === undefined ? undefined : guard(() => asTarget(safePath('github.as', as))),
    };
  }
  return undefined;
}

/** `as` as the folder or file a source lands on: `''` (the root) and `x/` mark a folder. */
function asTarget(target: { path: string; directory: boolean }): string {
  return target.directory && target.path !== '' ? `${target.path}/` : target.path;
}

function refPathOf(source: Source, label: string, base: string): string {
  if (!('ref' in source))
    throw new SourceResolutionError(
      label,
      source,
      'invalid-manifest',
      'a source needs one of inline, local, github or ref',
    );
  const raw = typeof source.ref === 'string' ? source.ref : source.ref.path;
  try {
    return safeWorkspacePath('ref.path', raw, base).path;
  } catch (error) {
    throw new SourceResolutionError(
      label,
      source,
      'unsafe-path',
      error instanceof Error ? error.message : String(error),
      { cause: error },
    );
  }
}

async function readWorkspaceManifest(
  fs: WorkspaceFs,
  path: string,
  label: string,
  source: Source,
): Promise<Record<string, unknown>> {
  let manifest: Record<string, unknown>;
  try {
    manifest = await fs.readManifest(path);
  } catch (error) {
    if (error instanceof WorkspaceLinkError)
      throw new SourceResolutionError(
        label,
        source,
        'unsafe-link',
        `the manifest in ${JSON.stringify(path)}: ${error.message}`,
        { cause: error },
      );
    // Too large, too deep, an alias bomb or not YAML: the manifest is there and refused.
    if (error instanceof DocumentError || (error instanceof WorkspaceManifestError && error.reason !== 'missing'))
      throw new SourceResolutionError(
        label,
        source,
        'invalid-manifest',
        `the manifest in ${JSON.stringify(path)}: ${error.message}`,
        { cause: error },
      );
    throw new SourceResolutionError(
      label,
      source,
      'not-found',
      `no code-workspace manifest in ${JSON.stringify(path)}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const rich = manifest.kind === 'code-workspace';
  const lean = manifest.schema === 'code/v2';
  if (!rich && !lean) {
    throw new SourceResolutionError(
      label,
      source,
      'not-a-code-workspace',
      `${JSON.stringify(path)} is neither kind: code-workspace nor schema: code/v2`,
    );
  }
  return manifest;
}

/** The sources a referenced manifest contributes: `code` (rich form) or `source` (lean CODE.md). */
function sourcesOf(manifest: Record<string, unknown>, label: string, source: Source): Source[] {
  const code: unknown =
    manifest.kind === 'code-workspace'
      ? manifest.code
      : manifest.source === undefined
        ? undefined
        : { sources: [manifest.source].flat() };
  try {
    validateCode(code, manifest.kind === 'code-workspace' ? '/code' : '/source');
  } catch (error) {
    throw new SourceResolutionError(
      label,
      source,
      'invalid-manifest',
      `the referenced manifest is invalid: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return sourcesOfBlock(code as Code);
}
