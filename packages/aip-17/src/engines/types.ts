import type { RunValue } from '@agentproto/aip-26';
import type { ExitReason } from '@agentproto/sandbox';
import type { RunnerEngine, RunnerHandle, RunnerLimits } from '../define/types.js';

/**
 * How one cap of `limits` held in a run:
 * - `enforced`: the run is stopped at the cap, every process it started included;
 * - `per-process`: each process is stopped at the cap (an rlimit), so a run of several
 *   processes can use the cap once per process, up to `maxProcesses` of them;
 * - `unenforced`: nothing stops the run at the cap;
 * - `uncapped`: the handle asks for no cap (`cpu_ms: 0`).
 */
export type CapEnforcement = 'enforced' | 'per-process' | 'unenforced' | 'uncapped';

/** How each cap of `limits` held (see `CapEnforcement`). */
export type Enforcement = { readonly [cap in keyof RunnerLimits]: CapEnforcement };

/** One run of a bundle. */
export interface RunnerRequest {
  /** The `defineRunner` handle; `run` applies `resolveForOrigin(origin)` itself. */
  runner: RunnerHandle;
  /** The manifest's source origin (`workspace`, `ai-draft`, …); absent is untrusted. */
  origin: string | undefined;
  /** The AIP-26 bundle, a tar.gz. */
  bundle: Buffer;
  /** The manifest's AIP-26 `run` block. */
  run: RunValue;
  /** The whole environment of the run: nothing of this process's is added. Default `{}`. */
  env?: Record<string, string>;
  /** Hosts the run may reach (`host` or `host:port`), through a proxy the runner starts. Default: no network. */
  network?: { egress: readonly string[] };
  /** Written to standard input, which is then closed. Default: closed at once. */
  stdin?: string | Uint8Array;
  /** Stops the run (reason `aborted`). */
  signal?: AbortSignal;
}

/** How a run ended. */
export interface RunOutcome {
  /** The engine that ran it, after the downgrade rule. */
  engine: RunnerEngine;
  /** `in-process` was asked by an untrusted origin and the run went `subprocess`. */
  downgraded: boolean;
  reason: ExitReason;
  stdout: Buffer;
  stderr: Buffer;
  durationMs: number;
  enforcement: Enforcement;
}

/** What `SandboxDriver.create` is given. */
export interface SandboxCreateRequest {
  /** The template id of the resolved handle (`runner.image`). */
  image: string;
  /** The run's environment, exactly. */
  env: Readonly<Record<string, string>>;
  /** The container's time to live: `limits.timeout_ms`. */
  timeoutMs: number;
  limits: RunnerLimits;
  /**
   * To honour at cold start (AIP-17 "engine: sandbox" steps 4-6): install, or throw
   * `RunnerNeedsError`. Installs that need the bundle (npm) happen in `upload`.
   */
  needs: RunnerHandle['needs'];
  /** Hosts the container may reach; absent: none. */
  network?: { egress: readonly string[] };
  signal?: AbortSignal;
}

/** A created sandbox; a driver may carry its own fields on it. */
export interface SandboxBox {
  /** Where `upload` puts the bundle inside the sandbox: the run's working folder. */
  readonly bundleRoot: string;
}

/** What `SandboxDriver.exec` is given: the resolved `run` command, no shell. */
export interface SandboxExecRequest {
  argv: readonly string[];
  cwd: string;
  stdin?: string | Uint8Array;
  /** What is left of `limits.timeout_ms`: the driver ends the command, and everything it started, past it. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** How the command ended, and its output. */
export interface SandboxExecResult {
  reason: ExitReason;
  stdout: Buffer;
  stderr: Buffer;
}

/**
 * The host's container provider (E2B, Modal, Fly Machines, or the local `bubblewrapDriver`),
 * as the `sandbox` engine uses it: `create`, `upload` the bundle, `exec` the run command,
 * and `destroy`, which is always called once `create` resolved, also after a failure.
 */
export interface SandboxDriver<Box extends SandboxBox = SandboxBox> {
  /** What the driver's sandboxes enforce of `limits`. */
  readonly enforcement: Enforcement;
  create(request: SandboxCreateRequest): Promise<Box>;
  upload(box: Box, bundle: Buffer): Promise<void>;
  exec(box: Box, request: SandboxExecRequest): Promise<SandboxExecResult>;
  destroy(box: Box): Promise<void>;
}
