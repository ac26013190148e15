import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type RunnerLogger,
  type SandboxTemplate,
  RunnerDefinitionError,
  RunnerHostError,
  RunnerImageError,
  RunnerUnresolvedError,
  defineRunner,
} from '../src/index.js';

/** A logger that keeps what it is told. */
function recordingLogger() {
  const calls: { message: string; details: Readonly<Record<string, unknown>> }[] = [];
  const logger: RunnerLogger = { warn: (message, details) => calls.push({ message, details }) };
  return { calls, logger };
}

const fields = (h: ReturnType<typeof defineRunner>) => ({
  engine: h.engine,
  image: h.image,
  needs: h.needs,
  limits: h.limits,
});

const REGISTRY: SandboxTemplate[] = [
  { id: 'mcp-node-server', language: ['node'], baked: { native: [] }, cost_tier: 'light', cold_start_ms: 800 },
  { id: 'mcp-python-server', language: ['python'], baked: { native: [] }, cost_tier: 'light' },
  { id: 'mcp-browser-server', language: ['node'], baked: { native: ['chromium'] }, cost_tier: 'heavy' },
  { id: 'docs-python', language: ['python'], baked: { native: ['weasyprint'] }, cost_tier: 'standard' },
  { id: 'polyglot', language: ['node', 'python', 'multi'], baked: { native: ['ffmpeg'] }, cost_tier: 'standard' },
];

describe('defineRunner: every handle field populated (defaults at the boundary)', () => {
  it('a manifest without a runner block gets subprocess, no image, empty needs, the recommended caps', () => {
    expect(fields(defineRunner())).toEqual({
      engine: 'subprocess',
      image: null,
      needs: { language: 'multi', native: [], npm: [], pip: [] },
      limits: { memory_mb: 256, timeout_ms: 600_000, cpu_ms: 0 },
    });
    expect(fields(defineRunner({}))).toEqual(fields(defineRunner()));
  });

  it('cpu_ms 0 means no cap, and a declared cap (at least 1) is kept as written', () => {
    expect(defineRunner({}).limits.cpu_ms).toBe(0);
    expect(defineRunner({ limits: { cpu_ms: 1 } }).limits.cpu_ms).toBe(1);
    expect(() => defineRunner({ limits: { cpu_ms: 0 } })).toThrow(RunnerDefinitionError);
  });

  it('declared values win over the host defaults, which win over the recommended ones', () => {
    const host = { defaults: { memory_mb: 512, cpu_ms: 5_000 } };
    expect(defineRunner({}, host).limits).toEqual({ memory_mb: 512, timeout_ms: 600_000, cpu_ms: 5_000 });
    expect(defineRunner({ limits: { memory_mb: 64, timeout_ms: 1_000 } }, host).limits).toEqual({
      memory_mb: 64,
      timeout_ms: 1_000,
      cpu_ms: 5_000,
    });
  });

  it.each([
    [{ defaults: { memory_mb: 0 } }, 'defaults.memory_mb'],
    [{ defaults: { timeout_ms: 1.5 } }, 'defaults.timeout_ms'],
    [{ defaults: { cpu_ms: -1 } }, 'defaults.cpu_ms'],
    [{ trustedOrigins: 'host' as unknown as string[] }, 'trustedOrigins'],
    [{ images: [{ ...REGISTRY[0]!, cost_tier: 'free' as 'light' }] }, 'images/0/cost_tier'],
    [{ images: [REGISTRY[0]!, { ...REGISTRY[1]!, id: 'mcp-node-server' }] }, 'images/1/id'],
  ])('refuses an unusable host option (%j → %s)', (host, option) => {
    const error = (() => {
      try {
        defineRunner({}, host);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(RunnerHostError);
    expect(error).toMatchObject({ code: 'AIP17_HOST_INVALID', option });
  });

  it('copies the needs: the caller’s arrays are neither shared nor frozen', () => {
    const native = ['ffmpeg'];
    const handle = defineRunner({ needs: { native } });
    expect(handle.needs.native).toEqual(['ffmpeg']);
    expect(handle.needs.native).not.toBe(native);
    expect(Object.isFrozen(native)).toBe(false);
  });
});

describe('defineRunner: needs.language', () => {
  it.each([
    ['tool.js', 'node'],
    ['tool.mjs', 'node'],
    ['tool.cjs', 'node'],
    ['src/tool.ts', 'node'],
    ['tool.mts', 'node'],
    ['tool.tsx', 'node'],
    ['tool.py --fast', 'python'],
    ['tool.sh', 'multi'],
    [['python3', 'tool.py'], 'multi'],
    ['cat a | wc -l', 'multi'],
    [{ file: 'bin/tool.py' }, 'python'],
  ] as const)('is inferred from run %j as %s when the block omits it', (run, language) => {
    expect(defineRunner({}, { run }).needs.language).toBe(language);
  });

  it('a declared language wins, and multi never contradicts a run file', () => {
    expect(defineRunner({ needs: { language: 'python' } }, { run: 'tool.py' }).needs.language).toBe('python');
    expect(defineRunner({ needs: { language: 'multi' } }, { run: 'tool.js' }).needs.language).toBe('multi');
  });

  it('refuses a declared language the run file contradicts, at /needs/language', () => {
    expect(() => defineRunner({ needs: { language: 'node' } }, { run: 'tool.py' })).toThrow(
      expect.objectContaining({
        code: 'AIP17_RUNNER_INVALID',
        problems: [expect.objectContaining({ pointer: '/needs/language' })],
      }),
    );
    expect(() => defineRunner({ inline: { needs: { language: 'node' } } } as never, { run: 'tool.py' })).toThrow(
      expect.objectContaining({ problems: [expect.objectContaining({ pointer: '/inline/needs/language' })] }),
    );
  });

  it('lets a bad run block fail with the AIP-26 error', () => {
    expect(() => defineRunner({}, { run: '../escape.js' })).toThrow(
      expect.objectContaining({ code: 'AIP26_UNSAFE_PATH' }),
    );
  });
});

describe('defineRunner: composition forms', () => {
  it('unwraps { inline }', () => {
    const handle = defineRunner({ inline: { engine: 'sandbox', needs: { language: 'python' } } } as never, {
      images: REGISTRY,
    });
    expect(handle.engine).toBe('sandbox');
    expect(handle.image).toBe('mcp-python-server');
  });

  it.each([
    [{ ref: '@agentik/runners/python-3.12' }, 'ref'],
    [{ file: './RUNNER.md' }, 'file'],
  ])('leaves %j to loadRunnerBlock (AIP17_RUNNER_UNRESOLVED)', (block, form) => {
    expect(() => defineRunner(block as never)).toThrow(RunnerUnresolvedError);
    expect(() => defineRunner(block as never)).toThrow(
      expect.objectContaining({ code: 'AIP17_RUNNER_UNRESOLVED', form }),
    );
  });
});

describe('defineRunner: image resolution', () => {
  it('is null for subprocess and in-process, even when an image is declared', () => {
    expect(defineRunner({ image: 'mcp-node-server' }, { images: REGISTRY }).image).toBeNull();
    expect(defineRunner({ engine: 'in-process', image: 'x' }).image).toBeNull();
  });

  it('keeps a declared image the registry has', () => {
    expect(defineRunner({ engine: 'sandbox', image: 'polyglot' }, { images: REGISTRY }).image).toBe('polyglot');
  });

  it('refuses a declared image the registry lacks, listing the available ids (AIP17_IMAGE_UNKNOWN)', () => {
    let error: unknown;
    try {
      defineRunner({ engine: 'sandbox', image: 'mcp-rust-server' }, { images: REGISTRY });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RunnerImageError);
    expect(error).toMatchObject({
      code: 'AIP17_IMAGE_UNKNOWN',
      image: 'mcp-rust-server',
      available: ['docs-python', 'mcp-browser-server', 'mcp-node-server', 'mcp-python-server', 'polyglot'],
    });
    expect((error as Error).message).toContain('mcp-rust-server');
    expect((error as Error).message).toContain('mcp-node-server');
  });

  it.each([
    [{ language: 'node' }, 'mcp-node-server'], // lightest node template
    [{ language: 'python' }, 'mcp-python-server'],
    [{ language: 'python', native: ['weasyprint'] }, 'docs-python'], // bakes the need, though heavier
    [{ language: 'node', native: ['chromium'] }, 'mcp-browser-server'],
    [{ language: 'node', native: ['ffmpeg'] }, 'polyglot'],
    [{ language: 'node', native: ['libreoffice'] }, 'mcp-node-server'], // nothing bakes it: lightest of the language
    [{ language: 'multi' }, 'polyglot'],
  ] as const)('auto-picks for needs %j: %s', (needs, image) => {
    expect(defineRunner({ engine: 'sandbox', needs }, { images: REGISTRY }).image).toBe(image);
  });

  it('breaks a tie of cost tier by the smaller id', () => {
    const twins: SandboxTemplate[] = [
      { id: 'node-b', language: ['node'], baked: { native: [] }, cost_tier: 'light' },
      { id: 'node-a', language: ['node'], baked: { native: [] }, cost_tier: 'light' },
    ];
    expect(defineRunner({ engine: 'sandbox', needs: { language: 'node' } }, { images: twins }).image).toBe('node-a');
  });

  it('infers the language from run before picking', () => {
    expect(defineRunner({ engine: 'sandbox' }, { images: REGISTRY, run: 'main.py' }).image).toBe('mcp-python-server');
  });

  it('refuses a sandbox runner no template serves, or with no registry at all (AIP17_IMAGE_UNRESOLVED)', () => {
    const onlyNode = REGISTRY.filter((t) => t.id === 'mcp-node-server');
    expect(() => defineRunner({ engine: 'sandbox', needs: { language: 'python' } }, { images: onlyNode })).toThrow(
      expect.objectContaining({ code: 'AIP17_IMAGE_UNRESOLVED', available: ['mcp-node-server'] }),
    );
    expect(() => defineRunner({ engine: 'sandbox' })).toThrow(
      expect.objectContaining({ code: 'AIP17_IMAGE_UNRESOLVED', available: [] }),
    );
  });

  it('picks the same image whatever the order of the registry (property)', () => {
    const template = fc.record({
      id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'),
      language: fc.subarray(['node', 'python', 'multi'] as const, { minLength: 1 }),
      baked: fc.record({ native: fc.subarray(['ffmpeg', 'chromium', 'weasyprint']) }),
      cost_tier: fc.constantFrom('light', 'standard', 'heavy' as const),
    });
    const registry = fc.uniqueArray(template, { minLength: 1, maxLength: 8, selector: (t) => t.id });
    const needs = fc.record({
      language: fc.constantFrom('node', 'python', 'multi' as const),
      native: fc.subarray(['ffmpeg', 'chromium', 'weasyprint']),
    });
    const pick = (images: SandboxTemplate[], n: { language: 'node' | 'python' | 'multi'; native: string[] }) => {
      try {
        return defineRunner({ engine: 'sandbox', needs: n }, { images }).image;
      } catch (error) {
        return (error as { code: string }).code;
      }
    };
    let picked = 0;
    fc.assert(
      fc.property(
        registry.chain((r) => fc.tuple(fc.constant(r), fc.shuffledSubarray(r, { minLength: r.length }))),
        needs,
        ([images, shuffled], n) => {
          const first = pick(images, n);
          if (first !== 'AIP17_IMAGE_UNRESOLVED') picked++;
          expect(pick(shuffled, n)).toBe(first);
        },
      ),
      { numRuns: 300 },
    );
    // The generator mostly yields registries that serve the needs, so the equality is about picks.
    expect(picked).toBeGreaterThan(150);
  });
});

describe('defineRunner: the handle is deeply frozen', () => {
  it('no body can change the handle, its needs, its limits, or a resolved copy', () => {
    const handle = defineRunner({ needs: { native: ['ffmpeg'] } });
    expect(Object.isFrozen(handle)).toBe(true);
    expect(Object.isFrozen(handle.needs)).toBe(true);
    expect(Object.isFrozen(handle.needs.native)).toBe(true);
    expect(Object.isFrozen(handle.limits)).toBe(true);
    expect(() => {
      (handle.limits as { memory_mb: number }).memory_mb = 1;
    }).toThrow(TypeError);
    expect(() => (handle.needs.native as string[]).push('x')).toThrow(TypeError);
    const resolved = handle.resolveForOrigin('host');
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(Object.isFrozen(resolved.needs.npm)).toBe(true);
  });

  it('two handles share no default: one cannot reach the other', () => {
    const a = defineRunner({});
    const b = defineRunner({});
    expect(a.needs.native).not.toBe(b.needs.native);
    expect(a.limits).not.toBe(b.limits);
  });
});

describe('resolveForOrigin: the downgrade rule', () => {
  const ENGINES = ['in-process', 'subprocess', 'sandbox'] as const;
  const ORIGINS = ['host', 'workspace', 'ai-draft', undefined, 'vendor', 'HOST'] as const;
  const table = ENGINES.flatMap((engine) => ORIGINS.map((origin) => [engine, origin] as const));

  it.each(table)('engine %s from origin %s', (engine, origin) => {
    const { calls, logger } = recordingLogger();
    const handle = defineRunner({ engine, needs: { language: 'node' } }, { images: REGISTRY, logger, id: 'tool/x' });
    const resolved = handle.resolveForOrigin(origin);
    const downgrade = engine === 'in-process' && origin !== 'host';
    expect(resolved.downgraded).toBe(downgrade);
    expect(resolved.engine).toBe(downgrade ? 'subprocess' : engine);
    expect(resolved.image).toBe(downgrade ? null : handle.image);
    expect(resolved.needs).toEqual(handle.needs);
    expect(resolved.limits).toEqual(handle.limits);
    expect(calls).toHaveLength(downgrade ? 1 : 0);
    if (downgrade) {
      const shown = origin ?? 'absent';
      expect(calls[0]!.message).toBe(
        `[runner] downgrading tool/x from engine=in-process → subprocess (origin=${shown} cannot self-elevate)`,
      );
      expect(calls[0]!.details).toMatchObject({ event: 'runner.downgraded', severity: 'high', origin: shown });
    }
    // The handle itself never changes.
    expect(handle.engine).toBe(engine);
  });

  it('logs once per downgrade: each call that downgrades, one warning', () => {
    const { calls, logger } = recordingLogger();
    const handle = defineRunner({ engine: 'in-process' }, { logger });
    expect(calls).toHaveLength(0); // defining logs nothing
    handle.resolveForOrigin('workspace');
    handle.resolveForOrigin('ai-draft');
    expect(calls.map((c) => c.details.origin)).toEqual(['workspace', 'ai-draft']);
    expect(calls[0]!.message).toContain('[runner] downgrading runner from');
  });

  it('the host decides trust: trustedOrigins replaces the default allow-list', () => {
    const handle = defineRunner({ engine: 'in-process' }, { trustedOrigins: ['vendor', 'host'] });
    expect(handle.resolveForOrigin('vendor').downgraded).toBe(false);
    expect(handle.resolveForOrigin('workspace').downgraded).toBe(true);
    const none = defineRunner({ engine: 'in-process' }, { trustedOrigins: [] });
    expect(none.resolveForOrigin('host')).toMatchObject({ engine: 'subprocess', downgraded: true });
  });

  it('without a logger, the flag is still there', () => {
    expect(defineRunner({ engine: 'in-process' }).resolveForOrigin('workspace').downgraded).toBe(true);
  });

  it('a downgraded copy is a handle too: resolving it again keeps subprocess', () => {
    const copy = defineRunner({ engine: 'in-process' }).resolveForOrigin('workspace');
    expect(copy.resolveForOrigin('host')).toMatchObject({ engine: 'subprocess', downgraded: false });
  });
});
