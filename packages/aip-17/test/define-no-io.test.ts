import { createRequire, syncBuiltinESMExports } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';

// AIP-17 rule 5: the module that exports defineRunner is importable without side effects.
// Every function of node:fs and node:fs/promises is wrapped to record calls made from the
// workspace's own source (a stack frame under packages/, outside node_modules), then the entry
// point is evaluated afresh. A fixture that reads a file at load proves the net catches I/O.

const require = createRequire(import.meta.url);
const modules = [require('node:fs'), require('node:fs/promises')] as Record<string, unknown>[];
const originals: [Record<string, unknown>, string, unknown][] = [];

function recordFsCalls(): string[] {
  const calls: string[] = [];
  for (const mod of modules) {
    for (const [name, value] of Object.entries(mod)) {
      if (typeof value !== 'function' || /^[A-Z]/.test(name)) continue; // classes (Stats, Dirent…) stay
      originals.push([mod, name, value]);
      mod[name] = function (this: unknown, ...args: unknown[]) {
        const ours = (new Error().stack ?? '')
          .split('\n')
          .slice(2)
          .some((line) => line.includes('/packages/') && !line.includes('node_modules'));
        if (ours) calls.push(name);
        return (value as (...a: unknown[]) => unknown).apply(this, args);
      };
    }
  }
  // ESM importers of node:fs see the wrapped functions only after this.
  syncBuiltinESMExports();
  return calls;
}

afterEach(() => {
  for (const [mod, name, value] of originals.splice(0)) mod[name] = value;
  syncBuiltinESMExports();
});

describe('no I/O at module load', () => {
  it('the net catches a module that reads a file when imported (control)', async () => {
    vi.resetModules();
    const calls = recordFsCalls();
    const fixture = await import('./fixtures/reads-at-load.js');
    expect(fixture.size).toBeGreaterThan(0);
    expect(calls).toContain('readFileSync');
  });

  it('importing @agentproto/aip-17 touches no file, nor does defining a runner', async () => {
    await import('../src/index.js'); // warm: node_modules dependencies load once, outside the net
    vi.resetModules();
    const calls = recordFsCalls();
    const { defineRunner, validateRunner } = await import('../src/index.js');
    expect(calls).toEqual([]);
    defineRunner({ engine: 'in-process', limits: { memory_mb: 64 } }, { run: 'main.js' }).resolveForOrigin('workspace');
    validateRunner({ needs: { language: 'node' } });
    expect(calls).toEqual([]);
  });
});
