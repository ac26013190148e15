/**
 * Inheritance from referenced code-workspaces (ADAPTER.md, "Inheritance semantics"):
 * `runner` merged field by field (the referencing manifest wins), `secrets` merged (the
 * referencing manifest wins on a conflict), `network.egress` only ever grows. `code`, `run`, IO and capabilities are not
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

/** A code-workspace as `planCode` reports it; `depth` (1 when absent) says who references whom. */
export interface InheritingWorkspace {
  path: string;
  manifest: Record<string, unknown>;
  depth?: number;
}

/**
 * The blocks a manifest ends up with (ADAPTER.md, "Inheritance semantics": the tool "MAY
 * override fields field-by-field", "Conflicts: tool overrides workspace"). The rule holds at
 * every level of a `ref` chain: a manifest wins over every code-workspace it references,
 * directly or through others, and a code-workspace wins over those *it* references. Among
 * siblings (several `ref` sources of one manifest) the later one wins, as sources overlay.
 *
 * `workspaces` is `planCode(...).workspaces`: depth-first, each workspace followed by the
 * ones it references, with their `depth`. So the fold is a tree fold: a workspace's own
 * blocks go over what its subtree gave, and that goes over its earlier siblings'. Without
 * `depth`, every workspace counts as referenced by the manifest itself (siblings).
 *
 * A runner language that differs from one already folded in is refused rather than
 * silently overridden (RunnerConflictError names the layer that brought it).
 */
export function inheritBlocks(
  manifest: Record<string, unknown>,
  workspaces: readonly InheritingWorkspace[],
): InheritedBlocks {
  // One frame per open node of the tree, the manifest at the bottom: `folded` is what its
  // children (so far) give, before its own blocks go on top. Iterative, so a host's long
  // list cannot exhaust the stack.
  interface Frame {
    depth: number;
    where: string;
    blocks: Manifest;
    folded: InheritedBlocks;
  }
  // A manifest or entry that is not a mapping has no blocks to give (hosts pass parsed
  // documents from strangers; a schema check is theirs to run).
  const stack: Frame[] = [{ depth: 0, where: 'the manifest', blocks: asRecord(manifest) ?? {}, folded: {} }];
  const close = () => {
    const frame = stack.pop()!;
    const parent = stack[stack.length - 1]!;
    // Its own blocks over its subtree's, then the result over its earlier siblings'.
    parent.folded = layer(parent.folded, layer(frame.folded, frame.blocks, frame.where), frame.where);
  };
  for (const entry of Array.isArray(workspaces) ? workspaces : []) {
    const workspace = asRecord(entry) as InheritingWorkspace | undefined;
    if (!workspace) continue;
    const depth = Number.isSafeInteger(workspace.depth) && workspace.depth! > 0 ? workspace.depth! : 1;
    while (stack[stack.length - 1]!.depth >= depth) close();
    stack.push({
      depth,
      where: `code-workspace ${typeof workspace.path === 'string' ? JSON.stringify(workspace.path) : '(no path)'}`,
      blocks: asRecord(workspace.manifest) ?? {},
      folded: {},
    });
  }
  while (stack.length > 1) close();
  const [root] = stack;
  return layer(root!.folded, root!.blocks, root!.where);
}

/** `over`'s runner, secrets and network on top of `base`: the one merge step of every level. */
function layer(base: InheritedBlocks, over: Manifest | InheritedBlocks, where: string): InheritedBlocks {
  let merged = base;
  const runner = asRecord(over.runner);
  if (runner) {
    const wanted = languageOf(runner);
    const found = merged.runner ? languageOf(merged.runner) : undefined;
    if (wanted && found && wanted !== found)
      throw new RunnerConflictError('runner.needs.language', wanted, found, where);
    merged = { ...merged, runner: deepMerge(merged.runner ?? {}, runner) };
  }
  const secrets = asRecord(over.secrets);
  if (secrets) merged = { ...merged, secrets: { ...merged.secrets, ...secrets } };
  const network = asRecord(over.network);
  if (network) {
    // Egress only ever grows: a referencing manifest may add hosts, never drop one.
    const egress = [...new Set([...(merged.network?.egress ?? []), ...stringList(network.egress)])];
    merged = { ...merged, network: { ...merged.network, ...network, egress } };
  }
  return merged;
}

/** The language a `run` entry needs, from its extension; undefined when it does not say. */
function languageOfRunFile(file: string): string | undefined {
  const ext = /\.[^./]+$/.exec(file)?.[0];
  if (ext === '.ts' || ext === '.tsx' || ext === '.mts' || ext === '.js' || ext === '.mjs' || ext === '.cjs')
    return 'node';
  if (ext === '.py') return 'python';
  return undefined;
}

/** Refuses a runner whose language contradicts the `run` file's extension (e.g. node with `tool.py`). */
export function assertRunnerFitsRun(runner: Record<string, unknown> | undefined, runFile: string | undefined): void {
  if (!runner || runFile === undefined) return;
  const language = languageOf(runner);
  const needed = languageOfRunFile(runFile);
  if (language && needed && language !== needed)
    throw new RunnerConflictError('run', runFile, language, 'runner.needs.language');
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
    // Defined, not assigned: a manifest's `__proto__` key is data, never the prototype.
    Object.defineProperty(out, key, {
      value: a && b ? deepMerge(a, b) : value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
