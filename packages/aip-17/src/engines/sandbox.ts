import { assertRunFileInBundle, readTarGz, resolveRun } from '@agentproto/aip-26';
import type { ResolvedRunnerHandle } from '../define/types.js';
import { RunnerEngineError } from './errors.js';
import type { LocalRunOptions } from './local.js';
import type { RunOutcome, RunnerRequest, SandboxBox, SandboxDriver } from './types.js';

/**
 * The `sandbox` engine (AIP-17 ADAPTER.md "engine: sandbox"): the bundle and its `run` file
 * checked here first, then `create` (image, env, TTL, needs), `upload`, `exec` of the
 * resolved `run` command, and `destroy`, always, once `create` resolved.
 */
export async function runInSandbox(
  handle: ResolvedRunnerHandle,
  request: RunnerRequest,
  driver: SandboxDriver<SandboxBox> | undefined,
  options: LocalRunOptions,
): Promise<Omit<RunOutcome, 'engine' | 'downgraded'>> {
  if (driver === undefined)
    throw new RunnerEngineError('sandbox', 'options.sandbox', 'createRunner was given no sandbox driver');
  // The driver is handed only a bundle that passes the archive rules and holds its run file.
  const entries = await readTarGz(request.bundle, {
    maxBytes: options.maxBytes ?? 256 * 1024 * 1024,
    maxFiles: options.maxFiles ?? 100_000,
  });
  assertRunFileInBundle(request.run, entries.keys());
  const started = performance.now();
  const box = await driver.create({
    image: handle.image ?? '',
    env: { ...(request.env ?? {}) },
    timeoutMs: handle.limits.timeout_ms,
    limits: handle.limits,
    needs: handle.needs,
    ...(request.network ? { network: request.network } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
  });
  let result: Awaited<ReturnType<typeof driver.exec>>;
  try {
    await driver.upload(box, request.bundle);
    const command = resolveRun(request.run, box.bundleRoot);
    result = await driver.exec(box, {
      argv: [command.cmd, ...command.args],
      cwd: command.cwd,
      ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
      timeoutMs: Math.max(1, handle.limits.timeout_ms - (performance.now() - started)),
      ...(request.signal ? { signal: request.signal } : {}),
    });
  } catch (error) {
    // The run's own failure is what the host needs to see; a failed destroy after it is not.
    await driver.destroy(box).catch(() => undefined);
    throw error;
  }
  await driver.destroy(box);
  return { ...result, durationMs: performance.now() - started, enforcement: driver.enforcement };
}
