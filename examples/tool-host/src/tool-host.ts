import { join, resolve } from 'node:path';
import {
  type Code,
  type CodeReport,
  type GithubAccess,
  type ResolvedGithubRef,
  type Runner,
  type RunResult,
  type SourceReport,
  SourceResolutionError,
  assertRunnerFitsRun,
  defineCodeWithReport,
  githubConnector,
  inheritBlocks,
  nodeWorkspaceFs,
  parseRun,
  planCode,
  scanCode,
  subprocessRunner,
} from '@agentproto/aip-26';
import { type ContentStore, openContentStore } from '@agentproto/content-cache';
import { type RegistrationProblem, ToolNotRegisteredError, ToolRefusedError, ToolSourceMovedError } from './errors.js';
import { type ToolManifest, checkToolManifest, nameOf } from './manifest.js';
import { problemsOf, relabel, topLevelIndex } from './problems.js';
import { type RegisteredSource, type RegisteredTool, ToolRegistry } from './registry.js';

export interface ToolHostOptions {
  /** The host's own folder: the registry (`registry.json`) and the content store (`cache/`). Keep it outside every workspace. */
  stateDir: string;
  /** Where github repositories are served: `${githubUrl}/${owner}/${name}.git`. Default https://github.com. */
  githubUrl?: string;
  /** A token for private repositories, asked for on every request that needs one. It never leaves the connector. */
  getToken?: () => Promise<string | undefined> | string | undefined;
  /** The AIP-17 runner bundles are handed to. Default: subprocessRunner(). */
  runner?: Runner;
}

export interface RegisterOptions {
  /** Where the manifest's `local` and `ref` sources are read from. */
  workspaceRoot: string;
  signal?: AbortSignal;
}

export interface RunToolOptions {
  /** The whole environment of the tool's process: nothing of the host's is passed on. */
  env?: Record<string, string>;
  stdin?: string | Buffer;
  signal?: AbortSignal;
}

export interface ToolRun extends RunResult {
  tool: string;
  /** SHA-256 of the bundle that ran. */
  bundleSha256: string;
}

/** Opens (creating when needed) the host's state folder. */
export async function openToolHost(options: ToolHostOptions): Promise<ToolHost> {
  const stateDir = resolve(options.stateDir);
  const cache = await openContentStore({ root: join(stateDir, 'cache') });
  return new ToolHost(options, new ToolRegistry(join(stateDir, 'registry.json')), cache);
}

/**
 * A host for AIP-26 tools. `register` is the registration-time check the seed asks for: it
 * resolves every source and applies every rule (scanCode) before anything is recorded, and
 * refuses the manifest with every problem it finds, each tied to its source. `run`
 * materializes the registered bundle and hands it to the runner.
 */
export class ToolHost {
  private readonly runner: Runner;
  /** One connector for the host's life, so a tag-shaped tag's resolution (`v1.2`) is reused for 24 h (AIP-26's cache contract). */
  private readonly github: GithubAccess;
  /** What each `repo\0ref` named on the server when last resolved: branch, tag or head. */
  private readonly refKinds = new Map<string, ResolvedGithubRef['kind']>();

  constructor(
    options: ToolHostOptions,
    readonly registry: ToolRegistry,
    private readonly cache: ContentStore,
  ) {
    this.runner = options.runner ?? subprocessRunner();
    this.github = githubConnector({
      baseUrl: options.githubUrl,
      // Fetched folders are kept by (repo, commit, path): a pinned source is fetched once, ever.
      cache,
      getToken: options.getToken,
      onResolved: (resolved) => this.refKinds.set(refKey(resolved.repo, resolved.ref), resolved.kind),
    });
  }

  /**
   * Checks the manifest, resolves every source (recording the commit each github ref names
   * now) and records the tool. Throws ToolRefusedError, with every problem found, when the
   * manifest cannot be built; nothing is recorded then.
   */
  async register(value: unknown, options: RegisterOptions): Promise<RegisteredTool> {
    const checked = checkToolManifest(value);
    if (!checked.ok) throw new ToolRefusedError(nameOf(value), checked.problems);
    const manifest = checked.manifest;
    const workspaceRoot = resolve(options.workspaceRoot);

    let report: CodeReport;
    try {
      // With `run`: its file must be in the merged bundle (AIP26_RUN_FILE_MISSING), or the
      // registration would record a tool that cannot start.
      report = await scanCode({
        code: manifest.code,
        workspaceRoot,
        github: this.github,
        signal: options.signal,
        run: manifest.run,
      });
      const { workspaces } = await planCode(manifest.code, nodeWorkspaceFs(workspaceRoot));
      const run = parseRun(manifest.run);
      // The runner a tool ends up with (its own over its code-workspaces') must speak the language of its run file.
      assertRunnerFitsRun(inheritBlocks(manifest, workspaces).runner, run.form === 'file' ? run.file : undefined);
    } catch (error) {
      const problems = problemsOf(error, manifest.code);
      if (!problems) throw error;
      const later = await this.laterSourceProblems(error, manifest.code, workspaceRoot, options.signal);
      throw new ToolRefusedError(manifest.name, [...problems, ...later]);
    }

    const sources = report.sources.map((source) => this.registeredSource(source));
    const tool: RegisteredTool = {
      name: manifest.name,
      manifest,
      code: pinnedCode(manifest.code, sources),
      workspaceRoot,
      sources,
      registeredAt: new Date().toISOString(),
    };
    await this.registry.put(tool);
    return tool;
  }

  /**
   * Materializes the registered bundle and runs it. The manifest's own github sources are
   * pinned to the commits recorded at registration, so a branch that moved since then does
   * not change what runs; a source reached through a code-workspace that now resolves
   * elsewhere stops the run before the runner starts (ToolSourceMovedError).
   */
  async run(name: string, options: RunToolOptions = {}): Promise<ToolRun> {
    const tool = await this.registry.get(name);
    if (!tool) throw new ToolNotRegisteredError(name);
    const { bundle, report } = await defineCodeWithReport({
      code: tool.code,
      workspaceRoot: tool.workspaceRoot,
      github: this.github,
      // A code block whose sources are all pinned is built once and then read back, fetching nothing.
      cache: this.cache,
      signal: options.signal,
    });
    for (const registered of tool.sources) {
      if (registered.commit === undefined) continue;
      const now = report.sources.find((source) => source.source === registered.source);
      if (now?.commit !== registered.commit)
        throw new ToolSourceMovedError(name, registered.source, registered.commit, now?.commit);
    }
    // The runner the tool ends up with: its own over its code-workspaces' (ADAPTER.md
    // "Inheritance semantics"), so a timeout set by a code-workspace applies too.
    const { workspaces } = await planCode(tool.code, nodeWorkspaceFs(tool.workspaceRoot));
    const limits = inheritBlocks(tool.manifest, workspaces).runner?.limits as { timeout_ms?: unknown } | undefined;
    const result = await this.runner.run({
      bundle,
      run: tool.manifest.run,
      env: options.env ?? {},
      timeoutMs: typeof limits?.timeout_ms === 'number' ? limits.timeout_ms : undefined,
      stdin: options.stdin,
      signal: options.signal,
    });
    return { ...result, tool: name, bundleSha256: report.sha256 };
  }

  list(): Promise<RegisteredTool[]> {
    return this.registry.list();
  }

  /** A source of the scan report as the registry keeps it; for github, with the commit and what kind of ref led there. */
  private registeredSource(source: SourceReport): RegisteredSource {
    const entry: RegisteredSource = {
      source: source.source,
      kind: source.kind,
      files: source.files,
      bytes: source.bytes,
    };
    if (source.kind !== 'github' || !('github' in source.declaration)) return entry;
    const { repo, ref } = source.declaration.github;
    // A full commit id is used as is, without asking the server: no resolution is reported for it.
    const refKind = FULL_COMMIT.test(ref) ? 'commit' : (this.refKinds.get(refKey(repo, ref)) ?? 'commit');
    return { ...entry, repo, ref, refKind, commit: source.commit };
  }

  /**
   * scanCode stops at the first source it cannot use. For a trust UI that shows every bad
   * source at once, the sources after it are scanned again one by one, each alone (rules
   * between sources, such as case twins and the bundle limits, were the whole scan's job).
   */
  private async laterSourceProblems(
    error: unknown,
    code: Code,
    workspaceRoot: string,
    signal: AbortSignal | undefined,
  ): Promise<RegistrationProblem[]> {
    if (!(error instanceof SourceResolutionError) || typeof code === 'string') return [];
    const first = topLevelIndex(error.source);
    if (first === undefined) return [];
    const problems: RegistrationProblem[] = [];
    for (let index = first + 1; index < code.sources.length; index++) {
      const alone: Code = { sources: [code.sources[index]!] };
      try {
        await scanCode({ code: alone, workspaceRoot, github: this.github, signal });
      } catch (later) {
        const found = problemsOf(later, alone);
        if (!found) throw later;
        problems.push(...found.map((problem) => relabel(problem, index)));
      }
    }
    return problems;
  }
}

const FULL_COMMIT = /^[0-9a-f]{40}$/;

function refKey(repo: string, ref: string): string {
  return `${repo}\0${ref}`;
}

/**
 * The code block with each of the manifest's own github sources pinned to the commit it
 * resolved to at registration. Sources inside referenced code-workspaces are not in the
 * manifest and stay as they are (run checks their commits instead).
 */
function pinnedCode(code: Code, sources: readonly RegisteredSource[]): Code {
  if (typeof code === 'string') return code;
  return {
    sources: code.sources.map((source, index) => {
      if (!('github' in source)) return source;
      const commit = sources.find((s) => s.source === `sources[${index}]`)?.commit;
      return commit === undefined ? source : { github: { ...source.github, ref: commit } };
    }),
  };
}

export type { ToolManifest };
