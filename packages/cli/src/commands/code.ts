import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type Code,
  type GithubAccess,
  ManifestValidationError,
  type RunValue,
  assertRunnerFitsRun,
  checkRun,
  defineCodeWithReport,
  inheritBlocks,
  nodeWorkspaceFs,
  planCode,
  githubConnector,
  parseRun,
  scanCode,
  subprocessRunner,
} from '@agentproto/aip-26';
import { type ContentStore, type ContentStoreOptions, defaultCacheRoot, openContentStore } from '@agentproto/content-cache';
import { readYamlFile } from '../read-yaml.js';
import { CommandError } from '../command-error.js';
import { printFailure } from '../failure.js';
import { formatBytes, printable, shellQuote } from '../format.js';
import { EXIT_FAILURE, EXIT_OK, printJson } from '../io.js';
import { REMOTE_OPTIONS, remoteTier } from '../registry-auth.js';
import type { Terminal } from '../terminal.js';
import { UsageError } from '../usage.js';

const OPTIONS = {
  workspace: { type: 'string' },
  out: { type: 'string' },
  json: { type: 'boolean', default: false },
  'github-url': { type: 'string' },
  'cache-root': { type: 'string' },
  env: { type: 'string', multiple: true },
  ...REMOTE_OPTIONS,
} as const;

/** `agentproto code <check|bundle|run> <manifest>`; main has answered `--help`. */
export async function runCode(args: readonly string[], term: Terminal): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'check' && sub !== 'bundle' && sub !== 'run') throw new UsageError(sub === undefined ? 'code needs a subcommand: check, bundle or run' : `unknown command "code ${sub}"`);
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(`code ${sub}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const [manifestPath, ...extra] = parsed.positionals;
  if (manifestPath === undefined || extra.length > 0) throw new UsageError(`code ${sub} takes exactly one manifest`);
  const manifest = await readManifest(resolve(manifestPath));
  const workspaceRoot = resolve(parsed.values.workspace ?? dirname(resolve(manifestPath)));
  const code = manifest.code as Code;
  const run = manifest.run as RunValue | undefined;
  if (run !== undefined) {
    const checked = checkRun(run, { pointer: '/run' });
    if (!checked.ok) throw new ManifestValidationError(checked.problems, { subject: 'run block' });
    // The runner the manifest ends up with (its own over its code-workspaces') must speak the
    // language of its run file.
    const parsed = parseRun(run);
    const { workspaces } = await planCode(code, nodeWorkspaceFs(workspaceRoot));
    assertRunnerFitsRun(inheritBlocks(manifest, workspaces).runner, parsed.form === 'file' ? parsed.file : undefined);
  }
  const { github, idle } = connector(parsed.values['github-url'], parsed.values['cache-root'], remoteTier(`code ${sub}`, parsed.values, term));

  if (sub === 'check') {
    const report = await scanCode({ code, workspaceRoot, github });
    await idle();
    if (parsed.values.json) printJson(term, report);
    else {
      for (const source of report.sources) term.stdout.write(`${printable(source.source)}  ${source.kind}  ${source.files} files  ${formatBytes(source.bytes)}${source.commit ? `  ${source.commit}` : ''}\n`);
      term.stdout.write(`ok: ${report.files} files, ${formatBytes(report.bytes)}\n`);
    }
    return EXIT_OK;
  }

  const { bundle, report } = await defineCodeWithReport({ code, workspaceRoot, github });
  await idle(); // fetched sources reach the registry before the command goes on
  if (sub === 'bundle') {
    if (parsed.values.out === undefined) throw new UsageError('code bundle needs --out FILE');
    await writeFile(resolve(parsed.values.out), bundle);
    if (parsed.values.json) printJson(term, report);
    else term.stdout.write(`${shellQuote(resolve(parsed.values.out))}: ${report.files} files, ${formatBytes(report.bytes)} → ${formatBytes(bundle.length)}, sha256 ${report.sha256}\n`);
    return EXIT_OK;
  }

  if (run === undefined) throw new CommandError('code run: the manifest has no run block');
  const limits = (manifest.runner as { limits?: { timeout_ms?: number } } | undefined)?.limits;
  // The process gets PATH (to find node, python, bash) and the --env pairs, nothing else.
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  for (const pair of parsed.values.env ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--env takes KEY=VALUE, not ${JSON.stringify(pair)}`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const result = await subprocessRunner().run({ bundle, run, env, timeoutMs: limits?.timeout_ms });
  if (parsed.values.json) printJson(term, { ...result, stdout: result.stdout.toString(), stderr: result.stderr.toString() });
  else {
    term.stdout.write(result.stdout.toString());
    term.stderr.write(result.stderr.toString());
  }
  // The program's own status is not ours (ours says only: it failed), so it is named here.
  if (result.timedOut) printFailure(term, { message: `code run: timed out after ${limits?.timeout_ms} ms`, hint: 'raise runner.limits.timeout_ms in the manifest if the program needs longer' });
  else if (result.exitCode !== 0) printFailure(term, { message: `code run: the program ${result.exitCode === null ? `was killed by ${result.signal}` : `exited with status ${result.exitCode}`}` });
  return result.exitCode === 0 ? EXIT_OK : EXIT_FAILURE;
}

async function readManifest(path: string): Promise<Record<string, unknown>> {
  // YAML is a superset of JSON: one parser reads both.
  const value = await readYamlFile(path, 'manifest');
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new CommandError(`${shellQuote(path)} is not a manifest (a mapping)`);
  return value as Record<string, unknown>;
}

/**
 * GitHub sources go through a connector; the token comes from GITHUB_TOKEN and never leaves
 * it. The cache is opened on first use, so a manifest without github sources touches no
 * store; with `--remote` it shares what it fetched through the registry.
 */
function connector(baseUrl: string | undefined, cacheRoot: string | undefined, tier: Pick<ContentStoreOptions, 'remote' | 'onEvent'>): { github: GithubAccess; idle(): Promise<void> } {
  let store: Promise<ContentStore> | undefined;
  let access: Promise<GithubAccess> | undefined;
  const get = () =>
    (access ??= (store = openContentStore({ root: cacheRoot === undefined ? defaultCacheRoot() : resolve(cacheRoot), ...tier })).then((cache) =>
      githubConnector({ baseUrl, cache, getToken: () => process.env.GITHUB_TOKEN }),
    ));
  return {
    github: {
      resolveRef: async (repo, ref) => (await get()).resolveRef(repo, ref),
      fetch: async (repo, ref, subpath) => (await get()).fetch(repo, ref, subpath),
    },
    idle: async () => (store ? (await store).remoteIdle() : undefined),
  };
}
