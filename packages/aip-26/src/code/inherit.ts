/**
 * Inheritance from referenced code-workspaces (ADAPTER.md, "Inheritance semantics"):
 * `runner` merged field by field (the tool wins), `secrets` merged (the tool wins on a
 * conflict), `network.egress` only ever grows. `code`, `run`, IO and capabilities are not
 * inherited. A host calls this with the manifest and the workspaces `scanCode` reports.
 */
export interface InheritedBlocks {
  runner?: Record<string, unknown>;
  secrets?: Record<string, unknown>;
  network?: Record<string, unknown> & { egress?: string[] };
}

export class RunnerConflictError extends Error {
  readonly code = 'AIP26_RUNNER_CONFLICT';
  constructor(
    readonly field: string,
    readonly wanted: string,
    readonly found: string,
    readonly where: string,
  ) {
    super(`${field}: ${JSON.stringify(wanted)} conflicts with ${JSON.stringify(found)} from ${where}`);
    this.name = 'RunnerConflictError';
  }
}

type Manifest = Record<string, unknown>;

/**
 * Folds the workspaces' blocks in order (a later workspace overrides an earlier one), then
 * the manifest's own. A manifest whose runner language differs from a workspace's is
 * refused rather than silently overriding it.
 */
export function inheritBlocks(manifest: Manifest, workspaces: { path: string; manifest: Manifest }[]): InheritedBlocks {
  let merged: InheritedBlocks = {};
  const layers = [...workspaces.map((w) => ({ where: `code-workspace ${JSON.stringify(w.path)}`, blocks: w.manifest })), { where: 'the manifest', blocks: manifest }];
  for (const { where, blocks } of layers) {
    const runner = asRecord(blocks.runner);
    if (runner) {
      const wanted = languageOf(runner);
      const found = merged.runner ? languageOf(merged.runner) : undefined;
      if (wanted && found && wanted !== found) throw new RunnerConflictError('runner.needs.language', wanted, found, where);
      merged = { ...merged, runner: deepMerge(merged.runner ?? {}, runner) };
    }
    const secrets = asRecord(blocks.secrets);
    if (secrets) merged = { ...merged, secrets: { ...merged.secrets, ...secrets } };
    const network = asRecord(blocks.network);
    if (network) {
      const egress = [...new Set([...(merged.network?.egress ?? []), ...stringList(network.egress)])];
      merged = { ...merged, network: { ...merged.network, ...network, egress } };
    }
  }
  return merged;
}

/** The language a `run` entry needs, from its extension; undefined when it does not say. */
export function languageOfRunFile(file: string): string | undefined {
  const ext = /\.[^./]+$/.exec(file)?.[0];
  if (ext === '.ts' || ext === '.tsx' || ext === '.mts' || ext === '.js' || ext === '.mjs' || ext === '.cjs') return 'node';
  if (ext === '.py') return 'python';
  return undefined;
}

/** Refuses a runner whose language contradicts the `run` file's extension (e.g. node with `tool.py`). */
export function assertRunnerFitsRun(runner: Record<string, unknown> | undefined, runFile: string | undefined): void {
  if (!runner || runFile === undefined) return;
  const language = languageOf(runner);
  const needed = languageOfRunFile(runFile);
  if (language && needed && language !== needed) throw new RunnerConflictError('run', runFile, language, 'runner.needs.language');
}

function languageOf(runner: Record<string, unknown>): string | undefined {
  const needs = asRecord(runner.needs);
  const language = needs?.language ?? runner.language;
  return typeof language === 'string' ? language : undefined;
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const a = asRecord(out[key]);
    const b = asRecord(value);
    out[key] = a && b ? deepMerge(a, b) : value;
  }
  return out;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
