import { type RunValue, parseRun } from '@agentproto/aip-26';
import { checkedDefinition, unwrapBlock } from './block.js';
import { RunnerDefinitionError, RunnerHostError, RunnerUnresolvedError } from './errors.js';
import { checkRegistry, resolveImage } from './images.js';
import type {
  ResolvedRunnerHandle,
  RunnerDefinition,
  RunnerEngine,
  RunnerHandle,
  RunnerHost,
  RunnerLanguage,
  RunnerLimits,
} from './types.js';

/** The spec's RECOMMENDED memory cap, in MiB. */
const DEFAULT_MEMORY_MB = 256;
/** The spec's RECOMMENDED wall-clock cap: 10 minutes. */
const DEFAULT_TIMEOUT_MS = 600_000;
/** The spec's default CPU cap: none, written 0 (a declared cap is at least 1). */
const NO_CPU_CAP = 0;

const DEFAULT_TRUSTED_ORIGINS: readonly string[] = Object.freeze(['host']);

/** Node and tsx run these (AIP-26's default runners), Python this one. */
const LANGUAGE_BY_EXTENSION: Readonly<Record<string, RunnerLanguage>> = {
  '.js': 'node',
  '.mjs': 'node',
  '.cjs': 'node',
  '.ts': 'node',
  '.tsx': 'node',
  '.mts': 'node',
  '.py': 'python',
};

/** The language a `run` value implies: its file's extension; undefined for exec/shell forms and other files. */
function languageOfRun(run: RunValue | undefined): { language: RunnerLanguage; file: string } | undefined {
  if (run === undefined) return undefined;
  const parsed = parseRun(run);
  if (parsed.form !== 'file') return undefined;
  const extension = /\.[^./]+$/.exec(parsed.file)?.[0] ?? '';
  const language = Object.hasOwn(LANGUAGE_BY_EXTENSION, extension) ? LANGUAGE_BY_EXTENSION[extension] : undefined;
  return language === undefined ? undefined : { language, file: parsed.file };
}

function positiveInteger(value: unknown, option: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    throw new RunnerHostError(option, `must be an integer of at least ${min}`);
  return value;
}

/** The host options, checked once, with their defaults. */
export function hostPolicy(host: RunnerHost) {
  if (host === null || typeof host !== 'object') throw new RunnerHostError('host', 'must be an object');
  const defaults = host.defaults ?? {};
  const limits: RunnerLimits = {
    memory_mb: positiveInteger(defaults.memory_mb, 'defaults.memory_mb', 1) ?? DEFAULT_MEMORY_MB,
    timeout_ms: positiveInteger(defaults.timeout_ms, 'defaults.timeout_ms', 1) ?? DEFAULT_TIMEOUT_MS,
    cpu_ms: positiveInteger(defaults.cpu_ms, 'defaults.cpu_ms', 0) ?? NO_CPU_CAP,
  };
  if (host.images !== undefined) checkRegistry(host.images);
  const trusted = host.trustedOrigins ?? DEFAULT_TRUSTED_ORIGINS;
  if (!Array.isArray(trusted) || !trusted.every((o) => typeof o === 'string'))
    throw new RunnerHostError('trustedOrigins', 'must be a list of origin names');
  if (host.id !== undefined && typeof host.id !== 'string') throw new RunnerHostError('id', 'must be a string');
  return { limits, trusted: new Set(trusted), id: host.id ?? 'runner' };
}

/**
 * The definition in a block given to the synchronous entry points: plain or `{ inline }`.
 * A `{ ref }` or `{ file }` needs the host's resolver, so only `loadRunnerBlock` takes one.
 */
function plainDefinition(block: unknown): { def: RunnerDefinition; at: string } {
  const unwrapped = unwrapBlock(block);
  switch (unwrapped.form) {
    case 'plain':
      return { def: checkedDefinition(unwrapped.value, unwrapped.pointer), at: unwrapped.pointer };
    case 'invalid':
      throw new RunnerDefinitionError(unwrapped.problems);
    default:
      throw new RunnerUnresolvedError(
        unwrapped.form,
        unwrapped.target,
        'defineRunner takes a plain or inline block; resolve this one with loadRunnerBlock first',
      );
  }
}

/** `needs.language`: declared, else implied by the `run` file, else `multi`; a contradiction is refused. */
export function languageFor(definition: RunnerDefinition, run: RunValue | undefined, at = ''): RunnerLanguage {
  const declared = definition.needs?.language;
  const implied = languageOfRun(run);
  if (declared !== undefined && declared !== 'multi' && implied !== undefined && declared !== implied.language) {
    throw new RunnerDefinitionError([
      {
        pointer: `${at}/needs/language`,
        message: `is ${JSON.stringify(declared)}, but the run file ${JSON.stringify(implied.file)} is ${implied.language}`,
      },
    ]);
  }
  return declared ?? implied?.language ?? 'multi';
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

interface HandleFields {
  readonly engine: RunnerEngine;
  readonly image: string | null;
  readonly needs: RunnerHandle['needs'];
  readonly limits: RunnerLimits;
}

function makeHandle(fields: HandleFields, host: RunnerHost, policy: ReturnType<typeof hostPolicy>): RunnerHandle {
  const handle: RunnerHandle = {
    ...fields,
    resolveForOrigin(origin: string | undefined): ResolvedRunnerHandle {
      // An allow-list: an absent origin, `workspace`, `ai-draft` and anything the host did not
      // name as trusted cannot self-elevate to the host's own process.
      const downgrade = fields.engine === 'in-process' && (origin === undefined || !policy.trusted.has(origin));
      if (!downgrade) return deepFreeze({ ...makeHandle(fields, host, policy), downgraded: false });
      const shown = origin === undefined ? 'absent' : origin;
      host.logger?.warn(
        `[runner] downgrading ${policy.id} from engine=in-process → subprocess (origin=${shown} cannot self-elevate)`,
        {
          event: 'runner.downgraded',
          severity: 'high',
          id: policy.id,
          origin: shown,
          from: 'in-process',
          to: 'subprocess',
        },
      );
      const downgraded = makeHandle({ ...fields, engine: 'subprocess', image: null }, host, policy);
      return deepFreeze({ ...downgraded, downgraded: true });
    },
  };
  return deepFreeze(handle);
}

/**
 * Turns a manifest's `runner` block into a handle with every field populated (AIP-17
 * `defineRunner`): engine `subprocess` unless declared; `needs` lists `[]` unless declared;
 * `needs.language` declared, else from the extension of `host.run`'s file (`.js .mjs .cjs .ts
 * .tsx .mts` node, `.py` python), else `multi`; limits declared, else `host.defaults`, else
 * memory 256 MiB, timeout 600000 ms, cpu 0 (no cap); `image` `null` unless the engine is
 * `sandbox`, where it is the declared template (which must be in `host.images`) or the
 * deterministic auto-pick. The handle is deeply frozen. Pure: no I/O, no logging until
 * `resolveForOrigin` downgrades.
 *
 * @param definition The block as the manifest wrote it (validated here), or `{ inline: … }`; `undefined` for a manifest without one.
 * @param host The host's policy: registry, defaults, trusted origins, logger.
 * @throws {RunnerDefinitionError} `AIP17_RUNNER_INVALID`: the block fails the schema, or its language contradicts the run file.
 * @throws {RunnerUnresolvedError} `AIP17_RUNNER_UNRESOLVED`: a `{ ref }` or `{ file }` block (use `loadRunnerBlock`).
 * @throws {RunnerImageError} `AIP17_IMAGE_UNKNOWN` (declared image not in the registry) or `AIP17_IMAGE_UNRESOLVED` (no template fits, or no registry).
 * @throws {RunnerHostError} `AIP17_HOST_INVALID`: an unusable host option.
 * @throws {RunResolutionError} `AIP26_RUN_INVALID`: `host.run` is no valid run block.
 * @throws {PathError} `AIP26_UNSAFE_PATH`: `host.run` names a file outside the bundle.
 * @example
 * ```ts
 * import { defineRunner } from '@agentproto/aip-17';
 *
 * const runner = defineRunner(manifest.runner, { run: manifest.run, logger: console });
 * const handle = runner.resolveForOrigin('workspace'); // in-process → subprocess, downgraded: true
 * console.log(handle.engine, handle.limits.timeout_ms);
 * ```
 */
export function defineRunner(definition?: RunnerDefinition, host: RunnerHost = {}): RunnerHandle {
  const policy = hostPolicy(host);
  const { def, at } = plainDefinition(definition);
  const engine = def.engine ?? 'subprocess';
  const needs = {
    language: languageFor(def, host.run, at),
    native: [...(def.needs?.native ?? [])],
    npm: [...(def.needs?.npm ?? [])],
    pip: [...(def.needs?.pip ?? [])],
  };
  const limits: RunnerLimits = {
    memory_mb: def.limits?.memory_mb ?? policy.limits.memory_mb,
    timeout_ms: def.limits?.timeout_ms ?? policy.limits.timeout_ms,
    cpu_ms: def.limits?.cpu_ms ?? policy.limits.cpu_ms,
  };
  const image = engine === 'sandbox' ? resolveImage(def.image, needs, host.images) : null;
  return makeHandle({ engine, image, needs, limits }, host, policy);
}
