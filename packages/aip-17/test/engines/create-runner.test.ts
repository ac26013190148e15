import { afterEach, describe, expect, it } from 'vitest';
import { RunnerEngineError, createRunner } from '../../src/index.js';
import type { RunnerLogger } from '../../src/index.js';
import { PATH_ENV, alive, bundleOf, handleFor, leftIn, marker, removeWorkDirs, workDir } from './support.js';

afterEach(removeWorkDirs);

/** A logger that keeps what it is told. */
function recordingLogger(): RunnerLogger & { warnings: { message: string; details: Record<string, unknown> }[] } {
  const warnings: { message: string; details: Record<string, unknown> }[] = [];
  return { warnings, warn: (message, details) => warnings.push({ message, details: { ...details } }) };
}

/** Prints where it runs: in this process the module sees the runner's pid, isolated it is init of its own namespace. */
const WHERE = `
export default function (context) {
  context.stdout.write('pid=' + process.pid + ' args=' + context.args.join(',') + ' env=' + JSON.stringify(context.env));
  return ' returned';
}
if (!process.argv[1]?.includes('vitest')) console.log('pid=' + process.pid + ' isolated');
`;

describe('createRunner: the downgrade rule is applied by run itself', () => {
  it('runs an in-process handle from a trusted origin in this process', async () => {
    const dir = await workDir();
    const run = 'where.mjs a b';
    const outcome = await createRunner({ workDir: dir }).run({
      runner: handleFor({ engine: 'in-process' }, { run }),
      origin: 'host',
      bundle: await bundleOf({ 'where.mjs': WHERE }),
      run,
      env: { GIVEN: 'yes' },
    });
    expect(outcome).toMatchObject({ engine: 'in-process', downgraded: false, reason: { kind: 'exit', code: 0 } });
    expect(outcome.stdout.toString()).toBe(`pid=${process.pid} args=a,b env={"GIVEN":"yes"} returned`);
    expect(outcome.enforcement).toEqual({ memory_mb: 'unenforced', timeout_ms: 'unenforced', cpu_ms: 'uncapped' });
    expect(await leftIn(dir)).toEqual([]);
  });

  it('runs an in-process handle from an untrusted origin isolated: downgraded, and the host logger warned', async () => {
    const dir = await workDir();
    const logger = recordingLogger();
    const run = 'where.mjs';
    const outcome = await createRunner({ workDir: dir, logger }).run({
      runner: handleFor({ engine: 'in-process' }, { run, logger, id: 'where' }),
      origin: 'workspace',
      bundle: await bundleOf({ 'where.mjs': WHERE }),
      run,
      env: PATH_ENV,
    });
    expect(outcome).toMatchObject({ engine: 'subprocess', downgraded: true, reason: { kind: 'exit', code: 0 } });
    // Init of its own PID namespace: pid 1 (or 2 under the egress bridge), never this process.
    expect(outcome.stdout.toString()).toMatch(/^pid=[12] isolated$/m);
    expect(logger.warnings.map((w) => w.details.event)).toEqual(['runner.downgraded']);
    expect(logger.warnings[0]?.message).toContain('origin=workspace cannot self-elevate');
    expect(await leftIn(dir)).toEqual([]);
  });

  it('reports a timeout in-process at timeout_ms and aborts the signal it gave the code', async () => {
    const dir = await workDir();
    const run = 'slow.mjs';
    const script = `export default (context) => new Promise((resolve) => {
      context.signal.addEventListener('abort', () => resolve('stopped'));
    });`;
    const outcome = await createRunner({ workDir: dir }).run({
      runner: handleFor({ engine: 'in-process', limits: { timeout_ms: 300 } }, { run }),
      origin: 'host',
      bundle: await bundleOf({ 'slow.mjs': script }),
      run,
    });
    expect(outcome.reason).toEqual({ kind: 'timeout' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(250);
  });

  it('reports a throw in-process as exit code 1 with the error on stderr', async () => {
    const run = 'fail.mjs';
    const outcome = await createRunner({ workDir: await workDir() }).run({
      runner: handleFor({ engine: 'in-process' }, { run }),
      origin: 'host',
      bundle: await bundleOf({ 'fail.mjs': 'export default () => { throw new Error("bundle says no"); };' }),
      run,
    });
    expect(outcome.reason).toEqual({ kind: 'exit', code: 1 });
    expect(outcome.stderr.toString()).toContain('bundle says no');
  });

  it('refuses in-process for a run that is not a node module file, before anything is made', async () => {
    const dir = await workDir();
    const run = 'tool.sh';
    const attempt = createRunner({ workDir: dir }).run({
      runner: handleFor({ engine: 'in-process' }, { run }),
      origin: 'host',
      bundle: await bundleOf({ 'tool.sh': 'echo hi' }),
      run,
    });
    await expect(attempt).rejects.toBeInstanceOf(RunnerEngineError);
    await expect(attempt).rejects.toMatchObject({ code: 'AIP17_ENGINE_UNSUPPORTED', engine: 'in-process' });
    expect(await leftIn(dir)).toEqual([]);
  });

  it('warns once per handle about each cap the engine cannot enforce', async () => {
    const logger = recordingLogger();
    const runner = createRunner({ workDir: await workDir(), logger });
    const run = 'ok.mjs';
    const handle = handleFor({ engine: 'in-process', limits: { cpu_ms: 500 } }, { run });
    const bundle = await bundleOf({ 'ok.mjs': 'export default () => "ok";' });
    for (let i = 0; i < 2; i += 1) await runner.run({ runner: handle, origin: 'host', bundle, run });
    expect(logger.warnings.map((w) => w.details.cap).sort()).toEqual(['cpu_ms', 'memory_mb', 'timeout_ms']);
    // The isolated engine enforces every cap (per process for memory and CPU): no warning.
    const isolated = recordingLogger();
    await createRunner({ workDir: await workDir(), logger: isolated }).run({
      runner: handleFor({ limits: { cpu_ms: 500 } }, { run }),
      origin: 'workspace',
      bundle,
      run,
      env: PATH_ENV,
    });
    expect(isolated.warnings).toEqual([]);
  });

  it('refuses the sandbox engine without a driver', async () => {
    const run = 'ok.mjs';
    const attempt = createRunner({ workDir: await workDir() }).run({
      runner: handleFor(
        { engine: 'sandbox' },
        { run, images: [{ id: 'box', language: ['node'], baked: { native: [] }, cost_tier: 'light' }] },
      ),
      origin: 'workspace',
      bundle: await bundleOf({ 'ok.mjs': '' }),
      run,
    });
    await expect(attempt).rejects.toMatchObject({ code: 'AIP17_ENGINE_UNSUPPORTED', engine: 'sandbox' });
  });

  it('stops an isolated run when the host aborts: reason aborted, nothing of it left', async () => {
    const dir = await workDir();
    const mark = marker();
    const run = 'wait.sh';
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    const outcome = await createRunner({ workDir: dir }).run({
      runner: handleFor({ limits: { timeout_ms: 20_000 } }, { run }),
      origin: 'workspace',
      bundle: await bundleOf({ 'wait.sh': `setsid sleep ${mark} &\nexec sleep ${mark}` }),
      run,
      env: PATH_ENV,
      signal: controller.signal,
    });
    expect(outcome.reason).toEqual({ kind: 'aborted' });
    expect(alive(mark)).toEqual([]);
    expect(await leftIn(dir)).toEqual([]);
  });
});
