import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { RunnerNeedsError, bubblewrapDriver, createRunner } from '../../src/index.js';
import type { RunnerDefinition } from '../../src/index.js';
import { PATH_ENV, bundleOf, handleFor, leftIn, removeWorkDirs, workDir } from './support.js';

afterEach(removeWorkDirs);

const LIMITS = { memory_mb: 256, timeout_ms: 20_000, cpu_ms: 0 };
const NO_NEEDS = { language: 'node' as const, native: [], npm: [], pip: [] };

describe('bubblewrapDriver', () => {
  it('offers a template of the runtimes installed here', () => {
    const { template } = bubblewrapDriver();
    expect(template).toMatchObject({ id: 'local-bubblewrap', cost_tier: 'light', baked: { native: [] } });
    // node runs this test, from /usr/bin on these machines.
    expect(template.language).toContain('node');
  });

  it('create, upload, exec and destroy: the bundle runs isolated, and destroy removes its folder', async () => {
    const dir = await workDir();
    const driver = bubblewrapDriver({ workDir: dir });
    const box = await driver.create({
      image: 'local-bubblewrap',
      env: PATH_ENV,
      timeoutMs: 20_000,
      limits: LIMITS,
      needs: NO_NEEDS,
    });
    try {
      expect(box.bundleRoot).toBe('/bundle');
      await driver.upload(
        box,
        await bundleOf({ 'hello.mjs': 'console.log("hello from", process.cwd(), process.pid)' }),
      );
      const result = await driver.exec(box, { argv: ['node', '/bundle/hello.mjs'], cwd: '/bundle', timeoutMs: 20_000 });
      expect(result.reason).toEqual({ kind: 'exit', code: 0 });
      expect(result.stdout.toString()).toMatch(/^hello from \/bundle [12]\n$/);
    } finally {
      await driver.destroy(box);
    }
    expect(existsSync(box.folder)).toBe(false);
    expect(await leftIn(dir)).toEqual([]);
  });

  it('honours needs it can: the language runtime and an installed Debian package', async () => {
    const driver = bubblewrapDriver({ workDir: await workDir() });
    const box = await driver.create({
      image: 'local-bubblewrap',
      env: PATH_ENV,
      timeoutMs: 20_000,
      limits: LIMITS,
      needs: { ...NO_NEEDS, native: ['bubblewrap'] },
    });
    await driver.destroy(box);
  });

  it.each([
    ['npm packages', { npm: ['left-pad@1.3.0'] }, 'AIP17_NEEDS_UNSUPPORTED', ['npm:left-pad@1.3.0']],
    ['pip packages', { pip: ['requests==2.32.0'] }, 'AIP17_NEEDS_UNSUPPORTED', ['pip:requests==2.32.0']],
    [
      'a Debian package not installed',
      { native: ['aip17-no-such-package'] },
      'AIP17_NEEDS_MISSING',
      ['native:aip17-no-such-package'],
    ],
  ] as const)('refuses %s, naming them, before anything is made', async (_name, needs, code, named) => {
    const dir = await workDir();
    const driver = bubblewrapDriver({ workDir: dir });
    const attempt = driver.create({
      image: 'local-bubblewrap',
      env: PATH_ENV,
      timeoutMs: 20_000,
      limits: LIMITS,
      needs: { ...NO_NEEDS, ...needs },
    });
    await expect(attempt).rejects.toBeInstanceOf(RunnerNeedsError);
    await expect(attempt).rejects.toMatchObject({ code, needs: named, image: 'local-bubblewrap' });
    expect(await leftIn(dir)).toEqual([]);
  });

  it('refuses a language whose runtime is not in its path', async () => {
    const driver = bubblewrapDriver({ workDir: await workDir(), path: '/nonexistent' });
    expect(driver.template.language).toEqual([]);
    await expect(
      driver.create({ image: 'local-bubblewrap', env: PATH_ENV, timeoutMs: 1000, limits: LIMITS, needs: NO_NEEDS }),
    ).rejects.toMatchObject({ code: 'AIP17_NEEDS_MISSING', needs: ['language:node'] });
  });

  it('is the sandbox engine of createRunner: a handle that resolves to its template runs through it', async () => {
    const dir = await workDir();
    const driver = bubblewrapDriver({ workDir: dir });
    const run = 'hello.mjs';
    const definition: RunnerDefinition = { engine: 'sandbox', limits: { timeout_ms: 20_000 } };
    const outcome = await createRunner({ workDir: dir, sandbox: driver }).run({
      runner: handleFor(definition, { run, images: [driver.template] }),
      origin: 'workspace',
      bundle: await bundleOf({ 'hello.mjs': 'console.log("sandboxed", process.cwd())' }),
      run,
      env: PATH_ENV,
    });
    expect(outcome).toMatchObject({ engine: 'sandbox', downgraded: false, reason: { kind: 'exit', code: 0 } });
    expect(outcome.stdout.toString()).toBe('sandboxed /bundle\n');
    expect(outcome.enforcement).toEqual({ memory_mb: 'per-process', timeout_ms: 'enforced', cpu_ms: 'uncapped' });
    expect(await leftIn(dir)).toEqual([]);
  });

  it('is destroyed when the run fails: a needs refusal leaves nothing, a timeout leaves nothing', async () => {
    const dir = await workDir();
    const driver = bubblewrapDriver({ workDir: dir });
    const runner = createRunner({ workDir: dir, sandbox: driver });
    const run = 'sleep.sh';
    const outcome = await runner.run({
      runner: handleFor({ engine: 'sandbox', limits: { timeout_ms: 500 } }, { run, images: [driver.template] }),
      origin: 'workspace',
      bundle: await bundleOf({ 'sleep.sh': 'sleep 30' }),
      run,
      env: PATH_ENV,
    });
    expect(outcome.reason).toEqual({ kind: 'timeout' });
    expect(await leftIn(dir)).toEqual([]);
    await expect(
      runner.run({
        runner: handleFor({ engine: 'sandbox', needs: { npm: ['x@1'] } }, { run, images: [driver.template] }),
        origin: 'workspace',
        bundle: await bundleOf({ 'sleep.sh': 'sleep 30' }),
        run,
        env: PATH_ENV,
      }),
    ).rejects.toMatchObject({ code: 'AIP17_NEEDS_UNSUPPORTED' });
    expect(await leftIn(dir)).toEqual([]);
  });

  it('destroys the box when upload fails, and the host sees the upload error', async () => {
    const dir = await workDir();
    const local = bubblewrapDriver({ workDir: dir });
    const destroyed: string[] = [];
    const driver = {
      ...local,
      upload: async () => {
        throw new Error('upload refused by the provider');
      },
      destroy: async (box: Parameters<typeof local.destroy>[0]) => {
        destroyed.push(box.folder);
        await local.destroy(box);
      },
    };
    const run = 'ok.sh';
    await expect(
      createRunner({ workDir: dir, sandbox: driver }).run({
        runner: handleFor({ engine: 'sandbox' }, { run, images: [local.template] }),
        origin: 'workspace',
        bundle: await bundleOf({ 'ok.sh': 'true' }),
        run,
      }),
    ).rejects.toThrow('upload refused by the provider');
    expect(destroyed).toHaveLength(1);
    expect(await leftIn(dir)).toEqual([]);
  });
});
