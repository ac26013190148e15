import type { RunnerEngine, RunnerHandle, RunnerLimits, RunnerLogger } from '../define/types.js';
import { IN_PROCESS_ENFORCEMENT, runInProcess } from '../engines/in-process.js';
import { type LocalRunOptions, localEnforcement } from '../engines/local.js';
import { runInSandbox } from '../engines/sandbox.js';
import { runSubprocess } from '../engines/subprocess.js';
import type { Enforcement, RunOutcome, RunnerRequest, SandboxBox, SandboxDriver } from '../engines/types.js';

/** Options of `createRunner`: the bounds of local runs, the sandbox driver, the logger. */
export interface CreateRunnerOptions extends LocalRunOptions {
  /** The driver of the `sandbox` engine (the host's container provider, or `bubblewrapDriver()`). */
  // biome-ignore lint/suspicious/noExplicitAny: a driver's box type is its own; the runner only passes it back.
  sandbox?: SandboxDriver<any>;
  /** Receives one warning per handle and cap that the engine cannot enforce. */
  logger?: RunnerLogger;
}

/** Runs AIP-26 bundles by their AIP-17 runner handle. */
export interface BundleRunner {
  /** Runs one bundle; settles once nothing of the run is left on this machine. */
  run(request: RunnerRequest): Promise<RunOutcome>;
}

/**
 * A runner for AIP-26 bundles. `run` applies `request.runner.resolveForOrigin(request.origin)`
 * itself, so an `in-process` handle from an untrusted origin always runs `subprocess`, then:
 * - `subprocess`: isolated in bubblewrap (the bundle read-only at /bundle, scratch at /tmp,
 *   the system folders read-only, its own PID and network namespaces, exactly the env given,
 *   `limits` as rlimits and a timeout that ends every process it started);
 * - `in-process`: `import()` of the run file in this process, for trusted origins only;
 * - `sandbox`: through `options.sandbox` (create, upload, exec, destroy).
 * Everything a run made on this machine is removed before `run` settles. A cap the engine
 * cannot enforce is warned about through `options.logger`, once per handle and cap.
 *
 * @example
 * ```ts
 * import { createRunner, defineRunner } from '@agentproto/aip-17';
 *
 * const runner = createRunner({ logger: console });
 * const outcome = await runner.run({
 *   runner: defineRunner(manifest.runner, { run: manifest.run }),
 *   origin: 'workspace',
 *   bundle,
 *   run: manifest.run,
 *   env: { PATH: '/usr/bin:/bin' },
 *   network: { egress: ['api.example.com'] },
 * });
 * if (outcome.reason.kind !== 'exit' || outcome.reason.code !== 0) console.error(outcome.reason, outcome.stderr.toString());
 * ```
 *
 * @throws {SandboxUnavailableError} `SANDBOX_UNAVAILABLE` (from `run`): bubblewrap cannot isolate here; nothing ran, and no fall back is tried.
 * @throws {RunnerEngineError} `AIP17_ENGINE_UNSUPPORTED` (from `run`): `in-process` with a run that is not a node module file, or `sandbox` without a driver.
 * @throws {RunnerNeedsError} `AIP17_NEEDS_UNSUPPORTED` / `AIP17_NEEDS_MISSING` (from `run`): the sandbox driver cannot honour `needs`.
 * @throws {ArchiveError} (from `run`): the bundle breaks an archive rule or a bound (code UNSAFE_ARCHIVE, of @agentproto/archive).
 * @throws {RunResolutionError} `AIP26_RUN_INVALID` (from `run`): `run` names no runnable thing.
 * @throws {PathError} `AIP26_UNSAFE_PATH` (from `run`): `run`'s file is not a bundle-internal path.
 * @throws {RunFileMissingError} `AIP26_RUN_FILE_MISSING` (from `run`): `run`'s file is not in the bundle.
 * @throws {SandboxSpecError} `SANDBOX_SPEC_INVALID` (from `run`): a runtime folder cannot be mounted.
 * @throws {EgressHostError} `SANDBOX_EGRESS_HOST_INVALID` (from `run`): a `network.egress` entry is not `host` or `host:port`.
 */
export function createRunner(options: CreateRunnerOptions = {}): BundleRunner {
  const warned = new WeakMap<RunnerHandle, Set<string>>();
  const warnUnenforced = (handle: RunnerHandle, engine: RunnerEngine, enforcement: Enforcement) => {
    let seen = warned.get(handle);
    if (seen === undefined) {
      seen = new Set();
      warned.set(handle, seen);
    }
    for (const cap of Object.keys(enforcement) as (keyof RunnerLimits)[]) {
      const key = `${engine}:${cap}`;
      if (enforcement[cap] !== 'unenforced' || seen.has(key)) continue;
      seen.add(key);
      options.logger?.warn(`[runner] ${cap} ${handle.limits[cap]} is not enforced by engine=${engine}`, {
        event: 'runner.cap-unenforced',
        engine,
        cap,
        value: handle.limits[cap],
      });
    }
  };
  return {
    async run(request) {
      const handle = request.runner.resolveForOrigin(request.origin);
      const engine = handle.engine;
      // `cpu_ms: 0` asks for no cap: nothing to enforce, nothing to warn about.
      const asked = (enforcement: Enforcement): Enforcement =>
        handle.limits.cpu_ms > 0 ? enforcement : { ...enforcement, cpu_ms: 'uncapped' };
      const expected =
        engine === 'in-process'
          ? IN_PROCESS_ENFORCEMENT
          : engine === 'sandbox'
            ? options.sandbox?.enforcement
            : localEnforcement(handle.limits);
      if (expected) warnUnenforced(request.runner, engine, asked(expected));
      const outcome =
        engine === 'in-process'
          ? await runInProcess(handle, request, options)
          : engine === 'sandbox'
            ? await runInSandbox(handle, request, options.sandbox as SandboxDriver<SandboxBox> | undefined, options)
            : await runSubprocess(handle, request, options);
      return { engine, downgraded: handle.downgraded, ...outcome, enforcement: asked(outcome.enforcement) };
    },
  };
}
