import { REPRODUCTIONS, hostileDocument, runBounded } from '@agentproto/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

// Each case runs in a worker thread with a 256 MiB heap and a time limit: a declaration that
// exhausts memory kills the worker, not the test runner, and is reported as out-of-memory.
const TARGETS = new URL('./support/hostile-declarations.ts', import.meta.url);
const BOUNDS = { maxOldGenerationSizeMb: 256, timeoutMs: 20_000 };
const SEED = Date.now() % 2 ** 31;

describe('parseSkillDeclarationText and parseSkillDeclaration: hostile input ends in a typed error, in a bounded heap and time', () => {
  it('fuzz: hostile YAML and JSON declarations either parse or throw a SKILL_* error', async () => {
    const cases = fc
      .sample(fc.tuple(fc.constantFrom('yaml' as const, 'json' as const), hostileDocument), { numRuns: 30, seed: SEED })
      .map(([format, bytes]) => ({ name: `${format} ${bytes.length} bytes (seed ${SEED})`, input: { format, bytes } }));
    for (const outcome of await runBounded({ module: TARGETS, exportName: 'parseText', cases, ...BOUNDS })) {
      expect(['returned', 'threw'], `${outcome.name}: ${JSON.stringify(outcome)}`).toContain(outcome.status);
      if (outcome.status === 'threw')
        expect(outcome.error, `${outcome.name}: ${JSON.stringify(outcome.error)}`).toMatchObject({
          code: expect.stringMatching(/^SKILL_/),
        });
    }
  }, 600_000);

  it.each([
    ["`name: ` and 350,000 `[` (the 589-byte upload's text)", 'yaml', REPRODUCTIONS.upload, 'DOCUMENT_TOO_LARGE'],
    ['a list nested 100,000 deep', 'yaml', `${'['.repeat(100_000)}`, 'DOCUMENT_TOO_DEEP'],
    ['a JSON list nested 50,000 deep', 'json', `${'['.repeat(50_000)}${']'.repeat(50_000)}`, 'DOCUMENT_TOO_DEEP'],
    [
      'an alias bomb',
      'yaml',
      [
        '- &a0 [x, x, x, x, x, x, x, x, x, x]',
        ...Array.from({ length: 9 }, (_, i) => `- &a${i + 1} [${Array(10).fill(`*a${i}`).join(', ')}]`),
      ].join('\n'),
      'DOCUMENT_TOO_COMPLEX',
    ],
  ] as const)(
    '%s is SKILL_DECLARATION_INVALID, its cause the DocumentError of the rule it breaks',
    async (_label, format, text, causeCode) => {
      const [outcome] = await runBounded({
        module: TARGETS,
        exportName: 'parseText',
        cases: [{ name: format, input: { format, bytes: new TextEncoder().encode(text) } }],
        ...BOUNDS,
      });
      expect(outcome).toMatchObject({ status: 'threw', error: { code: 'SKILL_DECLARATION_INVALID', causeCode } });
    },
  );

  it('a parsed declaration of 100,000 entries, or a config of 2^20 values, is refused before any work per value', async () => {
    const outcomes = await runBounded({
      module: TARGETS,
      exportName: 'parseValue',
      cases: [
        { name: 'entries', input: { entries: 100_000, depth: 0, width: 0 } },
        // 2^20 leaves shared by reference: one small object graph, a million values to copy.
        { name: 'config', input: { entries: 1, depth: 20, width: 2 } },
      ],
      ...BOUNDS,
    });
    expect(outcomes).toMatchObject([
      { status: 'threw', error: { code: 'SKILL_DECLARATION_INVALID' } },
      { status: 'threw', error: { code: 'SKILL_ENTRY_INVALID' } },
    ]);
  });
});
