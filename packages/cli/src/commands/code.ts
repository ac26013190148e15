import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import {
  type Code,
  type GithubAccess,
  ManifestValidationError,
  type RunValue,
  assertRunnerFitsRun,
  checkCode,
  checkRun,
  defineCodeToFile,
  defineCodeWithReport,
  inheritBlocks,
  nodeWorkspaceFs,
  planCode,
  githubConnector,
  parseRun,
  scanCode,
} from '@agentproto/aip-26';
import type { ContentStore, ContentStoreOptions } from '@agentproto/content-cache';
import { readCodeMdFrontmatter } from '../read-code-md.js';
import { readYamlFile } from '../read-yaml.js';
import { CommandError } from '../command-error.js';
import { formatBytes, plural, printable, shellQuote } from '../format.js';
import { EXIT_OK, printJson } from '../io.js';
import { remoteFlags, remoteTier } from '../registry-auth.js';
import { type Invocation, flagOption, textOption } from '../table.js';
import type { Terminal } from '../terminal.js';
import { UsageError } from '../usage.js';

/** `agentproto code <check|bundle|run> <manifest>`, as the command table read it (paths checked). */
export async function runCode(invocation: Invocation, term: Terminal): Promise<number> {
  const { sub } = invocation;
  const manifestPath = invocation.positionals[0]!;
  const json = flagOption(invocation, 'json');
  const out = textOption(invocation, 'out');
  // Before any work: a bundle with nowhere to go is a wrong command line.
  if (sub === 'bundle' && out === undefined) throw new UsageError('code bundle needs --out FILE');
  const manifest = await readManifest(resolve(manifestPath));
  const workspaceRoot = resolve(textOption(invocation, 'workspace') ?? dirname(resolve(manifestPath)));
  const code = codeOf(manifest, resolve(manifestPath), workspaceRoot);
  const run = manifest.run as RunValue | undefined;
  // Every block is checked against the schema before anything reads it: a malformed block
  // is AIP26_MANIFEST_INVALID with its pointer, never a crash in the planning below.
  const checkedCode = checkCode(code.value, { pointer: code.pointer });
  if (!checkedCode.ok) throw new ManifestValidationError(checkedCode.problems, { subject: 'code block' });
  let runFile: string | undefined;
  if (run !== undefined) {
    const checked = checkRun(run, { pointer: '/run' });
    if (!checked.ok) throw new ManifestValidationError(checked.problems, { subject: 'run block' });
    const parsedRun = parseRun(run);
    if (parsedRun.form === 'file') runFile = parsedRun.file;
  }
  // The blocks the manifest ends up with, its own over its code-workspaces' (ADAPTER.md
  // "Inheritance semantics"): the runner must speak the language of the run file, and its
  // limits are the ones `code run` applies.
  const { workspaces } = await planCode(code.value, nodeWorkspaceFs(workspaceRoot));
  const blocks = inheritBlocks(manifest, workspaces);
  assertRunnerFitsRun(blocks.runner, runFile);
  // `code run` reads its runner, env and network before anything is bundled: a bad block is refused first.
  // The runner (and its schema) is loaded only by `code run`.
  const running = sub === 'run' ? await import('./code-run.js') : undefined;
  const plan = running?.planRun(invocation, term, blocks, run, manifestName(manifest, manifestPath));
  const { github, idle } = connector(
    textOption(invocation, 'github-url'),
    textOption(invocation, 'store'),
    await remoteTier(`code ${sub}`, remoteFlags(invocation), term),
  );

  if (sub === 'check') {
    // With `run`, its file must be in the merged bundle (AIP26_RUN_FILE_MISSING), as `run` requires.
    term.status(`resolving the sources of ${shellQuote(manifestPath)}`);
    const report = await scanCode({ code: code.value, workspaceRoot, github, run });
    await idle();
    if (json) printJson(term, report);
    else {
      for (const source of report.sources)
        term.stdout.write(
          `${printable(source.source)}  ${source.kind}  ${plural(source.files, 'file')}  ${formatBytes(source.bytes)}${source.commit ? `  ${source.commit}` : ''}\n`,
        );
      term.stdout.write(`ok: ${plural(report.files, 'file')}, ${formatBytes(report.bytes)}\n`);
    }
    return EXIT_OK;
  }

  // No progress of its own from the library: one status line while the sources are gathered.
  term.status(`bundling the sources of ${shellQuote(manifestPath)}`);
  if (sub === 'bundle') {
    // Written as it is compressed, into a file that takes the name once it is whole.
    const outPath = resolve(out!);
    const report = await defineCodeToFile({ code: code.value, workspaceRoot, github, run }, outPath);
    await idle(); // fetched sources reach the registry before the command goes on
    if (json) printJson(term, { out: outPath, ...report });
    else
      term.stdout.write(
        `${shellQuote(outPath)}: ${plural(report.files, 'file')}, ${formatBytes(report.bytes)} → ${formatBytes(report.compressedBytes)}, sha256 ${report.sha256}\n`,
      );
    return EXIT_OK;
  }
  const { bundle } = await defineCodeWithReport({ code: code.value, workspaceRoot, github, run });
  await idle();
  return running!.runPlanned(plan!, bundle, term);
}

/** How warnings name the manifest: its `name` or `id`, else its file name. */
function manifestName(manifest: Record<string, unknown>, manifestPath: string): string {
  for (const key of ['name', 'id'])
    if (typeof manifest[key] === 'string' && manifest[key] !== '') return manifest[key] as string;
  return basename(manifestPath);
}

async function readManifest(path: string): Promise<Record<string, unknown>> {
  // A Markdown file is a lean CODE.md (its front matter); else YAML, a superset of JSON.
  const value = path.endsWith('.md') ? await readCodeMdFrontmatter(path) : await readYamlFile(path, 'manifest');
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new CommandError(`${shellQuote(path)} is not a manifest (a mapping)`);
  return value as Record<string, unknown>;
}

/**
 * The `code` block to build, and where its problems point. A lean CODE.md (`schema:
 * code/v2`) declares `source` (one source or a list) with paths relative to its own folder,
 * exactly as when a manifest references it: at the workspace root its sources are the code
 * block; deeper, the code block is a `ref` to its folder, which the library reads the same way.
 */
function codeOf(
  manifest: Record<string, unknown>,
  manifestPath: string,
  workspaceRoot: string,
): { value: Code; pointer: string } {
  if (manifest.schema !== 'code/v2') {
    if (basename(manifestPath).endsWith('.md'))
      throw new CommandError(
        `${shellQuote(manifestPath)} is not a lean CODE.md: its front matter needs schema: code/v2`,
      );
    return { value: manifest.code as Code, pointer: '/code' };
  }
  const folder = relative(workspaceRoot, dirname(manifestPath));
  if (folder === '')
    return {
      value: (manifest.source === undefined ? undefined : { sources: [manifest.source].flat() }) as Code,
      pointer: '/source',
    };
  if (folder === '..' || folder.startsWith(`..${sep}`) || isAbsolute(folder))
    throw new CommandError(`${shellQuote(manifestPath)} is outside the workspace ${shellQuote(workspaceRoot)}`);
  return { value: { sources: [{ ref: folder.split(sep).join('/') }] }, pointer: '/code' };
}

/**
 * GitHub sources go through a connector; the token comes from GITHUB_TOKEN and never leaves
 * it. The cache is opened on first use, so a manifest without github sources touches no
 * store (and never loads the store's code); with `--remote` it shares what it fetched
 * through the registry.
 */
function connector(
  baseUrl: string | undefined,
  cacheRoot: string | undefined,
  tier: Pick<ContentStoreOptions, 'remote' | 'onEvent'>,
): { github: GithubAccess; idle(): Promise<void> } {
  let store: Promise<ContentStore> | undefined;
  let access: Promise<GithubAccess> | undefined;
  const get = (): Promise<GithubAccess> => {
    if (access === undefined) {
      store = import('@agentproto/content-cache').then(({ defaultCacheRoot, openContentStore }) =>
        openContentStore({ root: cacheRoot === undefined ? defaultCacheRoot() : resolve(cacheRoot), ...tier }),
      );
      access = store.then((cache) => githubConnector({ baseUrl, cache, getToken: () => process.env.GITHUB_TOKEN }));
    }
    return access;
  };
  return {
    github: {
      resolveRef: async (repo, ref) => (await get()).resolveRef(repo, ref),
      fetch: async (repo, ref, subpath) => (await get()).fetch(repo, ref, subpath),
    },
    idle: async () => (store === undefined ? undefined : (await store).remoteIdle()),
  };
}
