import {
  type Enforcement,
  type RunnerHandle,
  type RunnerLogger,
  type RunOutcome,
  RunnerDefinitionError,
  bubblewrapDriver,
  createRunner,
  defineRunner,
} from '@agentproto/aip-17';
import { type RunValue, subprocessRunner } from '@agentproto/aip-26';
import { CommandError } from '../command-error.js';
import { printFailure } from '../failure.js';
import { printable } from '../format.js';
import { EXIT_FAILURE, EXIT_OK, printJson } from '../io.js';
import { type Invocation, flagOption, listOption } from '../table.js';
import type { Terminal } from '../terminal.js';
import { UsageError } from '../usage.js';

/** A manifest read from a file on this machine: untrusted, so `in-process` runs as `subprocess`. */
const ORIGIN = 'workspace';

/** What `code run` will do, decided before anything is bundled. */
interface RunPlan {
  readonly run: RunValue;
  readonly handle: RunnerHandle;
  /** The program's whole env: PATH and the --env pairs. */
  readonly env: Record<string, string>;
  /** The hosts --egress granted; none: no network (isolated runs only). */
  readonly egress: readonly string[];
  /** false with --no-isolation: aip-26's bare subprocess runner. */
  readonly isolated: boolean;
  readonly driver: ReturnType<typeof bubblewrapDriver>;
  readonly logger: RunnerLogger;
}

/**
 * Reads the run's side of the command line and the manifest's blocks (after inheritance):
 * the `runner` block through `defineRunner` (a bad one is refused here, before anything is
 * bundled or run, with its pointer under `/runner`), the env, the granted hosts. A manifest
 * whose `network.egress` asks for hosts not granted gets one line on stderr saying which and
 * how to grant them: the host decides, never the manifest.
 */
export function planRun(
  invocation: Invocation,
  term: Terminal,
  blocks: { runner?: unknown; network?: unknown },
  run: RunValue | undefined,
  id: string,
): RunPlan {
  if (run === undefined) throw new CommandError('code run: the manifest has no run block');
  // The process gets PATH (to find node, python, bash) and the --env pairs, nothing else.
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  for (const pair of listOption(invocation, 'env')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--env takes KEY=VALUE, not ${JSON.stringify(pair)}`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const isolated = !flagOption(invocation, 'no-isolation');
  const egress = listOption(invocation, 'egress');
  const logger: RunnerLogger = {
    warn: (message) => term.stderr.write(`${term.yellow('warning:')} ${printable(message)}\n`),
  };
  // The sandbox engine runs on this machine's bubblewrap driver, its one template registered
  // (with --no-isolation too, so the same block is accepted, then run bare).
  const driver = bubblewrapDriver();
  let handle: RunnerHandle;
  try {
    handle = defineRunner(blocks.runner ?? {}, { id, run, logger, images: [driver.template] });
  } catch (error) {
    // The problems point into the manifest: its runner block, as it reads after inheritance.
    if (error instanceof RunnerDefinitionError)
      throw new RunnerDefinitionError(
        error.problems.map((problem) => ({ ...problem, pointer: `/runner${problem.pointer}` })),
        { subject: 'runner block', cause: error },
      );
    throw error;
  }
  const asked = askedHosts(blocks.network).filter((host) => !egress.includes(host));
  if (isolated && asked.length > 0)
    term.stderr.write(
      `${term.yellow('note:')} ${printable(`the manifest asks for network access to ${asked.join(', ')}; the run has no network but what you grant: ${asked.map((host) => `--egress ${host}`).join(' ')}`)}\n`,
    );
  return { run, handle, env, egress, isolated, driver, logger };
}

/** The hosts of a top-level `network: { egress: [...] }` block; nothing for anything else. */
function askedHosts(network: unknown): string[] {
  const egress = (network as { egress?: unknown } | null | undefined)?.egress;
  return Array.isArray(egress) ? egress.filter((host): host is string => typeof host === 'string') : [];
}

/** Runs the bundle as planned, prints its output and how it ended; the exit status of `code run`. */
export async function runPlanned(plan: RunPlan, bundle: Buffer, term: Terminal): Promise<number> {
  // Ctrl-C or a TERM ends the run (reason `aborted`) rather than this process alone, so every
  // process of it is ended and its folder removed before the command returns.
  const stop = new AbortController();
  let stoppedBy: string | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    stoppedBy ??= signal;
    stop.abort();
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  let outcome: RunOutcome;
  try {
    outcome = plan.isolated ? await runIsolated(plan, bundle, stop.signal) : await runBare(plan, bundle, stop.signal);
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  }
  const { reason } = outcome;
  if (term.json)
    printJson(term, {
      // The fields of the bare runner's result, as before, then the runner's own.
      exitCode: reason.kind === 'exit' ? reason.code : reason.kind === 'memory' ? reason.code : null,
      signal: 'signal' in reason ? reason.signal : reason.kind === 'timeout' ? 'SIGKILL' : null,
      timedOut: reason.kind === 'timeout',
      stdout: outcome.stdout.toString(),
      stderr: outcome.stderr.toString(),
      durationMs: outcome.durationMs,
      reason,
      engine: outcome.engine,
      downgraded: outcome.downgraded,
      isolated: plan.isolated,
      enforcement: outcome.enforcement,
    });
  else {
    term.stdout.write(outcome.stdout.toString());
    term.stderr.write(outcome.stderr.toString());
  }
  if (reason.kind === 'exit' && reason.code === 0) return EXIT_OK;
  // The program's own status is not ours (ours says only: it failed), so it is named here.
  printFailure(term, failureOf(outcome, plan, stoppedBy));
  return EXIT_FAILURE;
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

async function runIsolated(plan: RunPlan, bundle: Buffer, signal: AbortSignal): Promise<RunOutcome> {
  const runner = createRunner({ logger: plan.logger, sandbox: plan.driver });
  return runner.run({
    runner: plan.handle,
    origin: ORIGIN,
    bundle,
    run: plan.run,
    env: plan.env,
    ...(plan.egress.length > 0 ? { network: { egress: plan.egress } } : {}),
    signal,
  });
}

/**
 * `--no-isolation`: aip-26's `subprocessRunner`, as a host that wants no isolation calls it.
 * The timeout still ends everything the program started; nothing else is held back.
 */
async function runBare(plan: RunPlan, bundle: Buffer, signal: AbortSignal): Promise<RunOutcome> {
  const handle = plan.handle.resolveForOrigin(ORIGIN);
  const result = await subprocessRunner().run({
    bundle,
    run: plan.run,
    env: plan.env,
    timeoutMs: handle.limits.timeout_ms,
    signal,
  });
  const enforcement: Enforcement = {
    memory_mb: 'unenforced',
    timeout_ms: 'enforced',
    cpu_ms: handle.limits.cpu_ms > 0 ? 'unenforced' : 'uncapped',
  };
  return {
    engine: 'subprocess',
    downgraded: handle.downgraded,
    reason: result.timedOut
      ? { kind: 'timeout' }
      : signal.aborted
        ? { kind: 'aborted' }
        : result.exitCode === null
          ? { kind: 'signal', signal: result.signal ?? 'SIGKILL' }
          : { kind: 'exit', code: result.exitCode },
    stdout: result.stdout,
    stderr: result.stderr,
    durationMs: result.durationMs,
    enforcement,
  };
}

/** The failure line of a run that did not exit 0: its typed reason, and what to change. */
function failureOf(
  outcome: RunOutcome,
  plan: RunPlan,
  stoppedBy: string | undefined,
): { message: string; hint?: string } {
  const { limits } = plan.handle;
  const { reason } = outcome;
  switch (reason.kind) {
    case 'timeout':
      return {
        message: `code run: timed out after ${limits.timeout_ms} ms`,
        hint: 'raise runner.limits.timeout_ms in the manifest if the program needs longer',
      };
    case 'memory':
      return {
        message: `code run: the program ran out of memory (memory_mb ${limits.memory_mb})`,
        hint: 'raise runner.limits.memory_mb in the manifest if the program needs more',
      };
    case 'cpu':
      return {
        message: `code run: the program used its CPU time (cpu_ms ${limits.cpu_ms})`,
        hint: 'raise runner.limits.cpu_ms in the manifest if the program needs more',
      };
    case 'signal':
      return { message: `code run: the program was killed by ${reason.signal}` };
    case 'aborted':
      return { message: `code run: the run was stopped${stoppedBy ? ` by ${stoppedBy}` : ''}` };
    default:
      return {
        message: `code run: the program exited with status ${reason.code}`,
        // 127: the shell or exec found no program; in the sandbox, one under the home folder is not there.
        ...(reason.code === 127 && plan.isolated
          ? {
              hint: 'the sandbox sees the system folders and the runtime it starts, not your home folder: a program or runtime installed there (pyenv, a shell script that calls another) is not found; install it system-wide, or run with --no-isolation',
            }
          : {}),
      };
  }
}
