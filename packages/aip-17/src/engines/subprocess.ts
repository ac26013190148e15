import { assertRunFileInBundle, resolveRun } from '@agentproto/aip-26';
import type { ResolvedRunnerHandle } from '../define/types.js';
import {
  BUNDLE_ROOT,
  type LocalRunOptions,
  extractBundle,
  localEnforcement,
  makeRunFolder,
  removeRunFolder,
  runInFolder,
} from './local.js';
import type { RunOutcome, RunnerRequest } from './types.js';

/**
 * The `subprocess` engine, isolated: the bundle extracted into a fresh folder, its `run`
 * started inside bubblewrap (see local.ts for what it sees), the folder removed afterwards
 * whatever happened. `needs` is advisory here (AIP-17): the bundle brings its own deps.
 */
export async function runSubprocess(
  handle: ResolvedRunnerHandle,
  request: RunnerRequest,
  options: LocalRunOptions,
): Promise<Omit<RunOutcome, 'engine' | 'downgraded'>> {
  // The run block is checked before anything is made.
  const command = resolveRun(request.run, BUNDLE_ROOT);
  const folder = await makeRunFolder(options);
  try {
    assertRunFileInBundle(request.run, await extractBundle(folder, request.bundle, options));
    const result = await runInFolder(
      folder,
      {
        argv: [command.cmd, ...command.args],
        env: request.env ?? {},
        limits: handle.limits,
        timeoutMs: handle.limits.timeout_ms,
        network: request.network,
        stdin: request.stdin,
        signal: request.signal,
      },
      options,
    );
    return {
      reason: result.reason,
      stdout: result.stdout,
      stderr: result.stderr,
      durationMs: result.durationMs,
      enforcement: localEnforcement(handle.limits),
    };
  } finally {
    await removeRunFolder(folder);
  }
}
