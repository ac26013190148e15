import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RunnerDefinitionError, RunnerUnresolvedError, defineRunner, loadRunnerBlock } from '../src/index.js';

const PINNED = new URL('../../../schemas/aip-17/RUNNER.schema.json', import.meta.url);
/** SHA-256 of the AIP-17 draft's RUNNER.schema.json (2026-04-30 revision): the pinned copy is that file, byte for byte. */
const REFERENCE_SHA256 = '3678c1ba31c26fbb75d17ed5799c2edae941ae02b5ccf24ce4868bb73fa0e21a';

/** The problems `defineRunner` reports for a block, as [pointer, message] pairs. */
function problemsOf(block: unknown): [string, string][] {
  try {
    defineRunner(block as never);
  } catch (error) {
    if (error instanceof RunnerDefinitionError) return error.problems.map((p) => [p.pointer, p.message]);
    throw error;
  }
  throw new Error(`${JSON.stringify(block)} was accepted`);
}

describe('the pinned schema', () => {
  it('is RUNNER.schema.json of the spec, byte for byte', () => {
    expect(createHash('sha256').update(readFileSync(PINNED)).digest('hex')).toBe(REFERENCE_SHA256);
  });

  it('has the agentproto.sh $id and the runner block under $defs.runner', () => {
    const schema = JSON.parse(readFileSync(PINNED, 'utf8'));
    expect(schema.$id).toBe('https://agentproto.sh/schemas/aip-17/RUNNER.schema.json');
    expect(Object.keys(schema.$defs.runner.properties)).toEqual(['engine', 'image', 'needs', 'limits']);
  });
});

describe('every schema violation names its field by JSON pointer', () => {
  it.each([
    [{ engine: 'docker' }, '/engine', 'must be one of "subprocess", "sandbox", "in-process"'],
    [{ engine: 1 }, '/engine', 'must be one of'],
    [{ image: '' }, '/image', 'must not be empty'],
    [{ image: 5 }, '/image', 'must be of type string'],
    [{ needs: 'node' }, '/needs', 'must be of type object'],
    [{ needs: { language: 'rust' } }, '/needs/language', 'must be one of "node", "python", "multi"'],
    [{ needs: { native: 'ffmpeg' } }, '/needs/native', 'must be of type array'],
    [{ needs: { native: ['ffmpeg', ''] } }, '/needs/native/1', 'must not be empty'],
    [{ needs: { npm: ['@@x'] } }, '/needs/npm/0', 'must have the form <name>@<semver>'],
    [{ needs: { pip: [1] } }, '/needs/pip/0', 'must be of type string'],
    [{ needs: { apt: [] } }, '/needs/apt', 'is not an allowed property (allowed: language, native, npm, pip)'],
    [{ limits: { memory_mb: 0 } }, '/limits/memory_mb', 'must be at least 1'],
    [{ limits: { memory_mb: 1.5 } }, '/limits/memory_mb', 'must be an integer'],
    [{ limits: { memory_mb: '512' } }, '/limits/memory_mb', 'must be an integer'],
    [{ limits: { timeout_ms: -5 } }, '/limits/timeout_ms', 'must be at least 1'],
    [{ limits: { cpu_ms: 0 } }, '/limits/cpu_ms', 'must be at least 1'],
    [{ limits: { vcpus: 2 } }, '/limits/vcpus', 'is not an allowed property (allowed: memory_mb, timeout_ms, cpu_ms)'],
    [{ limits: [] }, '/limits', 'must be of type object'],
    [{ env: ['X'] }, '/env', 'is not an allowed property (allowed: engine, image, needs, limits)'],
    [{ 'a/b': 1 }, '/a~1b', 'is not an allowed property'],
    [null, '', 'must be of type object'],
    ['subprocess', '', 'must be of type object'],
    [[], '', 'must be of type object'],
  ])('%j → %s', (block, pointer, message) => {
    const problems = problemsOf(block);
    expect(problems[0]![0]).toBe(pointer);
    expect(problems[0]![1]).toContain(message);
  });

  it('reports every problem, and the message names the first pointer', () => {
    let error: RunnerDefinitionError | undefined;
    try {
      defineRunner({ limits: { memory_mb: 0 }, engine: 'vm' } as never);
    } catch (e) {
      error = e as RunnerDefinitionError;
    }
    expect(error?.code).toBe('AIP17_RUNNER_INVALID');
    expect(error?.problems.map((p) => p.pointer).sort()).toEqual(['/engine', '/limits/memory_mb']);
    expect(error?.message).toMatch(new RegExp(`^runner invalid at ${error?.problems[0]?.pointer}: `));
  });

  it('accepts the spec example as written', () => {
    const block = {
      engine: 'subprocess',
      needs: {
        language: 'node',
        native: ['weasyprint'],
        npm: ['stripe@^11.0.0', '@scope/pkg@1'],
        pip: ['requests==2.31.0'],
      },
      limits: { memory_mb: 1024, timeout_ms: 60_000, cpu_ms: 30_000 },
    };
    expect(defineRunner(block as never).limits.cpu_ms).toBe(30_000);
  });
});

describe('composition forms', () => {
  it.each([
    [{ inline: { engine: 'vm' } }, '/inline/engine'],
    [{ inline: 'subprocess' }, '/inline'],
    [{ ref: '' }, '/ref'],
    [{ file: 3 }, '/file'],
    [{ inline: {}, engine: 'subprocess' }, ''],
    [{ ref: 'a', file: 'b' }, ''],
  ])('%j is refused at %j', (block, pointer) => {
    expect(problemsOf(block)[0]![0]).toBe(pointer);
  });
});

describe('loadRunnerBlock', () => {
  it('returns a plain or inline block checked, as a copy', async () => {
    const block = { engine: 'sandbox', needs: { native: ['ffmpeg'] } } as const;
    const loaded = await loadRunnerBlock(block);
    expect(loaded).toEqual(block);
    expect(loaded.needs).not.toBe(block.needs);
    expect(await loadRunnerBlock({ inline: block })).toEqual(block);
    expect(await loadRunnerBlock(undefined)).toEqual({});
  });

  it('resolves { ref } through resolveRef and { file } through loadFile, sync or async', async () => {
    const asked: string[] = [];
    const resolvers = {
      resolveRef: (ref: string) => {
        asked.push(ref);
        return { needs: { language: 'python' } };
      },
      loadFile: async (path: string) => {
        asked.push(path);
        return { inline: { engine: 'in-process' } };
      },
    };
    expect(await loadRunnerBlock({ ref: '@agentik/runners/python-3.12' }, resolvers)).toEqual({
      needs: { language: 'python' },
    });
    expect(await loadRunnerBlock({ file: './RUNNER.md' }, resolvers)).toEqual({ engine: 'in-process' });
    expect(asked).toEqual(['@agentik/runners/python-3.12', './RUNNER.md']);
  });

  it.each([
    [{ ref: 'r' }, 'ref', 'r', 'no resolveRef'],
    [{ file: './RUNNER.md' }, 'file', './RUNNER.md', 'no loadFile'],
  ])('%j without its resolver is AIP17_RUNNER_UNRESOLVED', async (block, form, target, reason) => {
    const error = await loadRunnerBlock(block, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunnerUnresolvedError);
    expect(error).toMatchObject({ code: 'AIP17_RUNNER_UNRESOLVED', form, target });
    expect((error as Error).message).toContain(reason);
  });

  it('a failing resolver, or one that finds nothing, is AIP17_RUNNER_UNRESOLVED (never the defaults)', async () => {
    const boom = new Error('registry down');
    const failed = await loadRunnerBlock({ ref: 'r' }, { resolveRef: () => Promise.reject(boom) }).catch((e) => e);
    expect(failed).toMatchObject({ code: 'AIP17_RUNNER_UNRESOLVED', cause: boom });
    const missing = await loadRunnerBlock({ ref: 'r' }, { resolveRef: () => undefined }).catch((e) => e);
    expect(missing).toMatchObject({ code: 'AIP17_RUNNER_UNRESOLVED' });
    expect(missing.message).toContain('holds no runner block');
  });

  it('checks what a resolver returns, naming the ref, and refuses a ref to a ref', async () => {
    const bad = await loadRunnerBlock({ ref: 'r' }, { resolveRef: () => ({ limits: { memory_mb: 0 } }) }).catch(
      (e) => e,
    );
    expect(bad).toMatchObject({ code: 'AIP17_RUNNER_INVALID', problems: [{ pointer: '/limits/memory_mb' }] });
    expect(bad.message).toMatch(/^runner ref "r" invalid at \/limits\/memory_mb/);
    const chained = await loadRunnerBlock({ ref: 'r' }, { resolveRef: () => ({ ref: 'r' }) }).catch((e) => e);
    expect(chained).toMatchObject({ code: 'AIP17_RUNNER_INVALID', problems: [{ pointer: '/ref' }] });
  });
});
