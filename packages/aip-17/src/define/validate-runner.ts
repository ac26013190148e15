import { checkedDefinition, unwrapBlock } from './block.js';
import { defineRunner, hostPolicy, languageFor } from './define-runner.js';
import { type RunnerProblem, RunnerDefinitionError, RunnerImageError } from './errors.js';
import { resolveImage } from './images.js';
import type { RunnerDefinition, RunnerHandle, RunnerHost, RunnerLanguage } from './types.js';

/** What `validateRunner` found. `ok` when there is no problem; warnings never make it fail. */
export type RunnerValidation =
  | {
      readonly ok: true;
      readonly handle: RunnerHandle;
      readonly problems: readonly [];
      readonly warnings: readonly RunnerProblem[];
    }
  | {
      readonly ok: false;
      readonly problems: readonly RunnerProblem[];
      readonly warnings: readonly RunnerProblem[];
    };

const CAPS = ['memory_mb', 'timeout_ms', 'cpu_ms'] as const;

function definitionOrProblems(block: unknown): { def: RunnerDefinition; at: string } | RunnerProblem[] {
  const unwrapped = unwrapBlock(block);
  if (unwrapped.form === 'invalid') return unwrapped.problems;
  if (unwrapped.form !== 'plain')
    return [{ pointer: `/${unwrapped.form}`, message: 'must be resolved first (loadRunnerBlock)' }];
  try {
    return { def: checkedDefinition(unwrapped.value, unwrapped.pointer), at: unwrapped.pointer };
  } catch (error) {
    if (error instanceof RunnerDefinitionError) return [...error.problems];
    throw error;
  }
}

/**
 * The registration check of ADAPTER.md: the block against the schema, the declared image
 * against the registry (or the auto-pick of a sandbox runner), `needs.language` against the
 * `run` file, and whether the host can enforce each cap the block declares. Collects instead
 * of throwing: `problems` (each with the JSON pointer of its field, the first failure first)
 * make the block unusable; `warnings` do not: a declared cap `host.enforceable` says the host
 * cannot enforce, an `image` on a runner that is not `sandbox`. Each warning also goes to
 * `host.logger`, once. A host option that is unusable still throws, as it is the host's bug.
 *
 * @throws {RunnerHostError} `AIP17_HOST_INVALID`: an unusable host option.
 * @throws {RunResolutionError} `AIP26_RUN_INVALID`: `host.run` is no valid run block.
 * @throws {PathError} `AIP26_UNSAFE_PATH`: `host.run` names a file outside the bundle.
 * @example
 * ```ts
 * import { validateRunner } from '@agentproto/aip-17';
 *
 * const result = validateRunner(manifest.runner, { run: manifest.run, enforceable: { memory_mb: true, timeout_ms: true, cpu_ms: false } });
 * if (!result.ok) throw new Error(`${path}#/runner${result.problems[0].pointer}: ${result.problems[0].message}`);
 * ```
 */
export function validateRunner(definition: unknown, host: RunnerHost = {}): RunnerValidation {
  hostPolicy(host);
  const found = definitionOrProblems(definition);
  if (Array.isArray(found)) return { ok: false, problems: found, warnings: [] };
  // Pointers are into the block as written: under `/inline` for the inline form.
  const { def, at } = found;
  const problems: RunnerProblem[] = [];
  const warnings: RunnerProblem[] = [];

  let language: RunnerLanguage = 'multi';
  try {
    language = languageFor(def, host.run, at);
  } catch (error) {
    if (!(error instanceof RunnerDefinitionError)) throw error;
    problems.push(...error.problems);
  }

  const engine = def.engine ?? 'subprocess';
  if (engine === 'sandbox') {
    try {
      resolveImage(def.image, { language, native: def.needs?.native ?? [] }, host.images);
    } catch (error) {
      if (!(error instanceof RunnerImageError)) throw error;
      problems.push({ pointer: at + (def.image === undefined ? '/needs' : '/image'), message: error.message });
    }
  } else if (def.image !== undefined) {
    warnings.push({
      pointer: `${at}/image`,
      message: `is ignored: only a sandbox runner has an image (engine is ${engine})`,
    });
  }

  for (const cap of CAPS) {
    if (def.limits?.[cap] !== undefined && host.enforceable !== undefined && !host.enforceable[cap])
      warnings.push({ pointer: `${at}/limits/${cap}`, message: 'is declared, and this host cannot enforce it' });
  }
  for (const warning of warnings)
    host.logger?.warn(`[runner] ${host.id ?? 'runner'}: ${warning.pointer} ${warning.message}`, {
      event: 'runner.warning',
      id: host.id ?? 'runner',
      pointer: warning.pointer,
    });

  if (problems.length > 0) return { ok: false, problems, warnings };
  return { ok: true, handle: defineRunner(def, host), problems: [], warnings };
}
