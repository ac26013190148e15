import { type RunnerProblem, RunnerDefinitionError } from './errors.js';
import { runnerSchemaProblems } from './schema.js';
import type { RunnerDefinition, RunnerLogger } from './types.js';

/** A legacy (pre-2026-04-30) `runtime` block becomes these top-level blocks. */
export interface MigratedRuntime {
  /** `engine` from `mode`, `limits` from the legacy caps; `{}` when the legacy block had neither. */
  readonly runner: RunnerDefinition;
  /** AIP-19 bindings, one per `runtime.env` name; absent when the legacy block had no `env`. */
  readonly secrets?: Readonly<Record<string, { readonly vault: string }>>;
  /** `runtime.network.egress` as written, an empty list included; absent when it had none. */
  readonly network?: { readonly egress: readonly string[] };
  /**
   * JSON pointers (into the legacy block) of what was not migrated: `runtime.fs.read`/`write`
   * need a per-key decision to become AIP-16 `inputsFiles`/`outputsFiles`, and keys the
   * Compatibility table does not name are kept out rather than guessed at.
   */
  readonly unmigrated: readonly string[];
}

/** Options of `migrateLegacyRuntime`. */
export interface MigrateOptions {
  /** Names the manifest in the warning. Default `runner`. */
  readonly id?: string;
  /** Receives the deprecation warning, once per call. */
  readonly logger?: RunnerLogger;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The legacy cap fields, and the runner limit each becomes (AIP-17 "Compatibility"). */
const CAPS = { cpu_ms_max: 'cpu_ms', memory_mb_max: 'memory_mb', timeout_ms: 'timeout_ms' } as const;
const KNOWN = new Set(['mode', 'env', 'fs', 'network', ...Object.keys(CAPS)]);

function engineOf(mode: unknown, problems: RunnerProblem[]): RunnerDefinition['engine'] {
  if (mode === undefined) return undefined;
  if (mode === 'in-process') return 'in-process';
  // The legacy "sandbox" was host-local subprocess isolation; the new "sandbox" value means a
  // real container, which a legacy manifest never asked for.
  if (mode === 'sandbox' || mode === 'subprocess') return 'subprocess';
  problems.push({ pointer: '/mode', message: 'must be one of "in-process", "subprocess", "sandbox"' });
  return undefined;
}

function stringList(value: unknown, pointer: string, problems: RunnerProblem[]): string[] | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' && v !== '')) return [...value];
  problems.push({ pointer, message: 'must be a list of non-empty strings' });
  return undefined;
}

/**
 * Preprocesses a legacy `runtime` block to the 2026-04-30 layout, by the AIP-17 Compatibility
 * table: `mode` → `runner.engine` (`sandbox` → `subprocess`), `cpu_ms_max`/`memory_mb_max`/
 * `timeout_ms` → `runner.limits`, `env: ["X_Y"]` → `secrets: { X_Y: { vault: "x-y" } }`,
 * `network.egress` → top-level `network.egress`. `fs.read`/`fs.write` and unknown keys are listed
 * in `unmigrated`, not dropped silently. Warns through `options.logger` (the shape is deprecated),
 * never errors for being legacy.
 *
 * @throws {RunnerDefinitionError} `AIP17_RUNNER_INVALID`: a value the new layout cannot take (pointers into the legacy block, e.g. `/memory_mb_max`).
 * @example
 * ```ts
 * import { defineRunner, migrateLegacyRuntime } from '@agentproto/aip-17';
 *
 * const { runner, secrets, network } = migrateLegacyRuntime(manifest.runtime, { id: manifest.name, logger: console });
 * const handle = defineRunner(runner, host);
 * ```
 */
export function migrateLegacyRuntime(runtime: unknown, options: MigrateOptions = {}): MigratedRuntime {
  const subject = 'legacy runtime';
  if (!isObject(runtime)) throw new RunnerDefinitionError([{ pointer: '', message: 'must be an object' }], { subject });
  const problems: RunnerProblem[] = [];
  const unmigrated: string[] = [];

  const engine = engineOf(runtime.mode, problems);
  const limits: Record<string, unknown> = {};
  for (const [legacy, current] of Object.entries(CAPS))
    if (runtime[legacy] !== undefined) limits[current] = runtime[legacy];
  const runner: Record<string, unknown> = {};
  if (engine !== undefined) runner.engine = engine;
  if (Object.keys(limits).length > 0) runner.limits = limits;
  // The caps go through the runner schema; its pointers are mapped back to the legacy names.
  for (const p of runnerSchemaProblems(runner)) {
    const legacy = Object.entries(CAPS).find(([, current]) => p.pointer === `/limits/${current}`)?.[0];
    problems.push({ pointer: legacy === undefined ? p.pointer : `/${legacy}`, message: p.message });
  }

  const env = stringList(runtime.env, '/env', problems);
  let network: MigratedRuntime['network'];
  if (runtime.network !== undefined) {
    if (!isObject(runtime.network)) problems.push({ pointer: '/network', message: 'must be an object' });
    else {
      const egress = stringList(runtime.network.egress, '/network/egress', problems);
      // An empty list is kept: it says "no egress", which an absent block might not.
      if (egress !== undefined) network = { egress };
      for (const key of Object.keys(runtime.network))
        if (key !== 'egress') unmigrated.push(`/network/${escapePointer(key)}`);
    }
  }
  if (runtime.fs !== undefined) {
    if (isObject(runtime.fs)) for (const key of Object.keys(runtime.fs)) unmigrated.push(`/fs/${escapePointer(key)}`);
    else unmigrated.push('/fs');
  }
  for (const key of Object.keys(runtime)) if (!KNOWN.has(key)) unmigrated.push(`/${escapePointer(key)}`);
  if (problems.length > 0) throw new RunnerDefinitionError(problems, { subject });

  const id = options.id ?? 'runner';
  const left = unmigrated.length === 0 ? '' : `; not migrated, move by hand: ${unmigrated.join(', ')}`;
  options.logger?.warn(
    `[runner] ${id}: the legacy runtime block is deprecated; read as runner/secrets/network (AIP-17 Compatibility)${left}`,
    { event: 'runner.legacy', id, unmigrated: [...unmigrated] },
  );
  return {
    runner: runner as RunnerDefinition,
    ...(env === undefined
      ? {}
      : { secrets: Object.fromEntries(env.map((name) => [name, { vault: name.toLowerCase().replace(/_/g, '-') }])) }),
    ...(network === undefined ? {} : { network }),
    unmigrated,
  };
}
