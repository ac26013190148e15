import { describe, expect, it } from 'vitest';
import { RunnerConflictError, assertRunnerFitsRun, inheritBlocks } from '../src/index.js';

const workspace = {
  path: '.code-workspaces/render-utils',
  manifest: {
    kind: 'code-workspace',
    runner: {
      engine: 'sandbox',
      needs: { language: 'node', native: ['weasyprint'] },
      limits: { memory_mb: 2048, timeout_ms: 120000 },
    },
    secrets: { CLOUDINARY_KEY: { vault: 'cloudinary-api-key' }, SHARED: { vault: 'workspace' } },
    network: { egress: ['api.cloudinary.com'] },
  },
};

describe('inheritance from referenced code-workspaces (ADAPTER.md table)', () => {
  it('merges runner field by field, the manifest winning', () => {
    const merged = inheritBlocks({ runner: { limits: { timeout_ms: 30000 } } }, [workspace]);
    expect(merged.runner).toEqual({
      engine: 'sandbox',
      needs: { language: 'node', native: ['weasyprint'] },
      limits: { memory_mb: 2048, timeout_ms: 30000 },
    });
  });

  it('adds secrets, the manifest winning a conflict', () => {
    const merged = inheritBlocks({ secrets: { SHARED: { vault: 'tool' }, STRIPE_KEY: { vault: 'stripe' } } }, [
      workspace,
    ]);
    expect(merged.secrets).toEqual({
      CLOUDINARY_KEY: { vault: 'cloudinary-api-key' },
      SHARED: { vault: 'tool' },
      STRIPE_KEY: { vault: 'stripe' },
    });
  });

  it('only ever widens network egress', () => {
    expect(inheritBlocks({ network: { egress: ['api.stripe.com'] } }, [workspace]).network?.egress).toEqual([
      'api.cloudinary.com',
      'api.stripe.com',
    ]);
    expect(inheritBlocks({ network: { egress: [] } }, [workspace]).network?.egress).toEqual(['api.cloudinary.com']);
  });

  it('inherits nothing else (code, run, inputs, requiredCapabilities)', () => {
    const merged = inheritBlocks({}, [
      {
        path: 'w',
        manifest: { ...workspace.manifest, code: 'x', run: 'a.ts', inputs: {}, requiredCapabilities: ['x'] },
      },
    ]);
    expect(Object.keys(merged).sort()).toEqual(['network', 'runner', 'secrets']);
  });

  it('refuses a manifest asking for another language than its workspace', () => {
    expect(() => inheritBlocks({ runner: { needs: { language: 'python' } } }, [workspace])).toThrow(
      RunnerConflictError,
    );
  });
});

describe('runner language against the run entry', () => {
  it.each([
    [{ needs: { language: 'node' } }, 'tool.py', true],
    [{ needs: { language: 'python' } }, 'tool.ts', true],
    [{ needs: { language: 'node' } }, 'tool.mjs', false],
    [{ needs: { language: 'python' } }, 'tool.py', false],
    [{ needs: { language: 'node' } }, 'run.sh', false],
    [undefined, 'tool.py', false],
  ] as const)('runner %j with run %s conflicts: %s', (runner, file, conflicts) => {
    const check = () => assertRunnerFitsRun(runner as Record<string, unknown> | undefined, file);
    if (conflicts) expect(check).toThrow(RunnerConflictError);
    else expect(check).not.toThrow();
  });
});
