import { describe, expect, it } from 'vitest';
import { type RunnerLogger, type SandboxTemplate, validateRunner } from '../src/index.js';

function recordingLogger() {
  const calls: { message: string; details: Readonly<Record<string, unknown>> }[] = [];
  const logger: RunnerLogger = { warn: (message, details) => calls.push({ message, details }) };
  return { calls, logger };
}

const IMAGES: SandboxTemplate[] = [
  { id: 'mcp-node-server', language: ['node'], baked: { native: [] }, cost_tier: 'light' },
];
const NO_CPU = { memory_mb: true, timeout_ms: true, cpu_ms: false };

describe('validateRunner: the registration test of ADAPTER.md', () => {
  it('passes a good block and hands back its handle', () => {
    const result = validateRunner({ engine: 'sandbox', limits: { memory_mb: 64 } }, { images: IMAGES, run: 'main.js' });
    expect(result).toMatchObject({ ok: true, problems: [], warnings: [] });
    expect(result.ok && result.handle.image).toBe('mcp-node-server');
  });

  it('reports schema problems by pointer, without throwing', () => {
    const result = validateRunner({ limits: { memory_mb: 0 }, engine: 'vm' });
    expect(result.ok).toBe(false);
    expect(result.problems.map((p) => p.pointer).sort()).toEqual(['/engine', '/limits/memory_mb']);
  });

  it('reports an explicit image the registry lacks at /image, listing the available ones', () => {
    const result = validateRunner({ engine: 'sandbox', image: 'mcp-rust' }, { images: IMAGES });
    expect(result.problems).toEqual([
      { pointer: '/image', message: expect.stringContaining('available images: mcp-node-server') },
    ]);
  });

  it('reports a sandbox runner no image serves at /needs', () => {
    const result = validateRunner({ engine: 'sandbox', needs: { language: 'python' } }, { images: IMAGES });
    expect(result.problems.map((p) => p.pointer)).toEqual(['/needs']);
  });

  it('reports a language the run file contradicts (under /inline for the inline form)', () => {
    expect(validateRunner({ needs: { language: 'python' } }, { run: 'main.js' }).problems[0]?.pointer).toBe(
      '/needs/language',
    );
    expect(validateRunner({ inline: { needs: { language: 'python' } } }, { run: 'main.js' }).problems[0]?.pointer).toBe(
      '/inline/needs/language',
    );
  });

  it('reports a ref or file block as unresolved', () => {
    expect(validateRunner({ ref: 'r' }).problems).toEqual([{ pointer: '/ref', message: expect.any(String) }]);
  });

  it('warns, once each through the logger, about declared caps the host cannot enforce; ok stays true', () => {
    const { calls, logger } = recordingLogger();
    const result = validateRunner(
      { limits: { cpu_ms: 100, memory_mb: 64 } },
      { enforceable: NO_CPU, logger, id: 'tool/x' },
    );
    expect(result.ok).toBe(true);
    expect(result.warnings).toEqual([
      { pointer: '/limits/cpu_ms', message: 'is declared, and this host cannot enforce it' },
    ]);
    expect(calls.map((c) => c.message)).toEqual([
      '[runner] tool/x: /limits/cpu_ms is declared, and this host cannot enforce it',
    ]);
  });

  it('does not warn about caps the block leaves to the defaults, nor when the host does not say what it enforces', () => {
    expect(
      validateRunner({}, { enforceable: { memory_mb: false, timeout_ms: false, cpu_ms: false } }).warnings,
    ).toEqual([]);
    expect(validateRunner({ limits: { cpu_ms: 5 } }).warnings).toEqual([]);
  });

  it('warns that an image on a non-sandbox runner is ignored', () => {
    const result = validateRunner({ image: 'mcp-node-server' }, { images: IMAGES });
    expect(result.ok).toBe(true);
    expect(result.warnings.map((w) => w.pointer)).toEqual(['/image']);
  });

  it('still throws for a host option that is unusable: that is the host’s bug', () => {
    expect(() => validateRunner({}, { defaults: { memory_mb: -1 } })).toThrow(
      expect.objectContaining({ code: 'AIP17_HOST_INVALID' }),
    );
  });
});
