import { describe, expect, it } from 'vitest';
import { type RunnerLogger, RunnerDefinitionError, defineRunner, migrateLegacyRuntime } from '../src/index.js';

function recordingLogger() {
  const calls: { message: string; details: Readonly<Record<string, unknown>> }[] = [];
  const logger: RunnerLogger = { warn: (message, details) => calls.push({ message, details }) };
  return { calls, logger };
}

describe('migrateLegacyRuntime: the AIP-17 Compatibility table, row by row', () => {
  it.each([
    // runtime.mode → runner.engine; the legacy "sandbox" was host-local subprocess isolation.
    [{ mode: 'sandbox' }, { runner: { engine: 'subprocess' } }],
    [{ mode: 'subprocess' }, { runner: { engine: 'subprocess' } }],
    [{ mode: 'in-process' }, { runner: { engine: 'in-process' } }],
    // runtime.env → secrets, vault = lower case, "_" → "-" (AIP-19 binding).
    [
      { env: ['STRIPE_API_KEY', 'HOME'] },
      { runner: {}, secrets: { STRIPE_API_KEY: { vault: 'stripe-api-key' }, HOME: { vault: 'home' } } },
    ],
    // runtime.network.egress → network.egress at the top level.
    [{ network: { egress: ['api.stripe.com'] } }, { runner: {}, network: { egress: ['api.stripe.com'] } }],
    [{ network: { egress: [] } }, { runner: {}, network: { egress: [] } }],
    // The caps → runner.limits.
    [{ cpu_ms_max: 30_000 }, { runner: { limits: { cpu_ms: 30_000 } } }],
    [{ memory_mb_max: 512 }, { runner: { limits: { memory_mb: 512 } } }],
    [{ timeout_ms: 60_000 }, { runner: { limits: { timeout_ms: 60_000 } } }],
    [{}, { runner: {} }],
  ])('%j → %j', (runtime, expected) => {
    expect(migrateLegacyRuntime(runtime)).toEqual({ ...expected, unmigrated: [] });
  });

  it('migrates a whole legacy block, and the runner it gives is one defineRunner takes', () => {
    const migrated = migrateLegacyRuntime({
      mode: 'sandbox',
      env: ['GITHUB_TOKEN'],
      network: { egress: ['api.github.com'] },
      cpu_ms_max: 1_000,
      memory_mb_max: 128,
      timeout_ms: 5_000,
    });
    expect(migrated).toEqual({
      runner: { engine: 'subprocess', limits: { cpu_ms: 1_000, memory_mb: 128, timeout_ms: 5_000 } },
      secrets: { GITHUB_TOKEN: { vault: 'github-token' } },
      network: { egress: ['api.github.com'] },
      unmigrated: [],
    });
    expect(defineRunner(migrated.runner).limits).toEqual({ memory_mb: 128, timeout_ms: 5_000, cpu_ms: 1_000 });
  });

  it('lists fs.read/fs.write (AIP-16 needs a per-key decision) and unknown keys as unmigrated, never drops them', () => {
    const { calls, logger } = recordingLogger();
    const migrated = migrateLegacyRuntime(
      { fs: { read: ['./data'], write: ['./out'] }, network: { egress: ['a.example'], proxy: 'x' }, resources: {} },
      { id: 'tool/pdf', logger },
    );
    expect(migrated.unmigrated).toEqual(['/network/proxy', '/fs/read', '/fs/write', '/resources']);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.message).toContain('[runner] tool/pdf: the legacy runtime block is deprecated');
    expect(calls[0]!.message).toContain('/fs/read, /fs/write');
    expect(calls[0]!.details).toMatchObject({ event: 'runner.legacy', unmigrated: migrated.unmigrated });
  });

  it('warns once per call, also when everything migrates', () => {
    const { calls, logger } = recordingLogger();
    migrateLegacyRuntime({ mode: 'sandbox' }, { logger });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.message).toBe(
      '[runner] runner: the legacy runtime block is deprecated; read as runner/secrets/network (AIP-17 Compatibility)',
    );
  });

  it.each([
    [{ mode: 'docker' }, '/mode'],
    [{ memory_mb_max: 0 }, '/memory_mb_max'],
    [{ cpu_ms_max: 1.5 }, '/cpu_ms_max'],
    [{ timeout_ms: '60s' }, '/timeout_ms'],
    [{ env: 'HOME' }, '/env'],
    [{ env: [''] }, '/env'],
    [{ network: { egress: 'a.example' } }, '/network/egress'],
    [{ network: true }, '/network'],
    ['sandbox', ''],
  ])('refuses %j at %s, naming it in legacy terms', (runtime, pointer) => {
    const { calls, logger } = recordingLogger();
    let error: unknown;
    try {
      migrateLegacyRuntime(runtime, { logger });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RunnerDefinitionError);
    expect(error).toMatchObject({ code: 'AIP17_RUNNER_INVALID', problems: [expect.objectContaining({ pointer })] });
    expect((error as Error).message).toMatch(/^legacy runtime invalid at /);
    expect(calls).toHaveLength(0);
  });
});
