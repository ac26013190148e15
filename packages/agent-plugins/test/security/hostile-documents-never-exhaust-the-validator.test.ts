import { type BoundedOutcome, REPRODUCTIONS, hostileDocument, hostileSkillMd, runBounded } from '@agentproto/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

// Every case runs in a worker thread with a 256 MiB heap and a time limit: a case that
// exhausts memory kills the worker, not the test runner, and is reported as out-of-memory.
const TARGETS = new URL('./support/hostile-targets.ts', import.meta.url);
const BOUNDS = { maxOldGenerationSizeMb: 256, timeoutMs: 20_000 };
const SEED = Date.now() % 2 ** 31;

const skillMd = (frontmatter: string) => new TextEncoder().encode(`---\n${frontmatter}\n---\n# body\n`);
const label = (bytes: Uint8Array) =>
  `${bytes.length} bytes ${JSON.stringify(Buffer.from(bytes.subarray(0, 48)).toString('latin1'))} (seed ${SEED})`;

/** Each case returned (validatePlugin reports findings, it does not throw) within its bounds. */
function expectFindings(outcomes: BoundedOutcome[]): string[][] {
  return outcomes.map((outcome) => {
    expect(outcome.status, `${outcome.name}: ${JSON.stringify(outcome)}`).toBe('returned');
    return (outcome as { value: string[] }).value;
  });
}

describe('validatePlugin: a hostile SKILL.md ends in a finding, in a bounded heap and time', () => {
  it("`name: ` and 50,000 `:` or `[` (the issue's reproductions) is skill.frontmatter-too-large: over 32 KiB, never parsed", async () => {
    const cases = [
      { name: 'colons', input: skillMd(REPRODUCTIONS.colons) },
      { name: 'brackets', input: skillMd(REPRODUCTIONS.brackets) },
    ];
    expect(
      expectFindings(await runBounded({ module: TARGETS, exportName: 'validateSkillMd', cases, ...BOUNDS })),
    ).toEqual([['skill.frontmatter-too-large'], ['skill.frontmatter-too-large']]);
  });

  it('`name: ` and 30,000 `:`, under the cap, is parsed and is skill.frontmatter-invalid-yaml', async () => {
    const [codes] = expectFindings(
      await runBounded({
        module: TARGETS,
        exportName: 'validateSkillMd',
        cases: [{ name: 'colons', input: skillMd(`name: ${':'.repeat(30_000)}`) }],
        ...BOUNDS,
      }),
    );
    expect(codes).toContain('skill.frontmatter-invalid-yaml');
  });

  it('the front matter of the 589-byte upload (350,000 `[`) is skill.frontmatter-too-large, not an exhausted heap', async () => {
    const [codes] = expectFindings(
      await runBounded({
        module: TARGETS,
        exportName: 'validateSkillMd',
        cases: [{ name: 'upload', input: skillMd(REPRODUCTIONS.upload) }],
        ...BOUNDS,
      }),
    );
    expect(codes).toContain('skill.frontmatter-too-large');
  });

  it('`name: ` and 32,000 `[`, under the cap, is skill.frontmatter-too-deep, found before the parser builds anything', async () => {
    const [codes] = expectFindings(
      await runBounded({
        module: TARGETS,
        exportName: 'validateSkillMd',
        cases: [{ name: 'cut', input: skillMd(`name: ${'['.repeat(32_000)}`) }],
        ...BOUNDS,
      }),
    );
    expect(codes).toContain('skill.frontmatter-too-deep');
  });

  it('fuzz: deep nesting, long runs of indicators, alias bombs, huge scalars, many keys, BOMs and NULs all end in findings', async () => {
    const cases = fc
      .sample(hostileSkillMd, { numRuns: 24, seed: SEED })
      .map((input) => ({ name: label(input), input }));
    const findings = expectFindings(
      await runBounded({ module: TARGETS, exportName: 'validateSkillMd', cases, ...BOUNDS }),
    );
    for (const [index, codes] of findings.entries())
      expect(
        codes.every((code) => typeof code === 'string'),
        cases[index]!.name,
      ).toBe(true);
  }, 600_000);
});

describe('validatePlugin: a hostile plugin.json or mcp.json ends in a finding, in a bounded heap and time', () => {
  it('fuzz: YAML-, JSON- and TOML-shaped hostile documents in every encoding', async () => {
    const cases = fc
      .sample(fc.tuple(fc.constantFrom('plugin.json' as const, 'mcp.json' as const), hostileDocument), {
        numRuns: 24,
        seed: SEED,
      })
      .map(([file, bytes]) => ({ name: `${file} ${label(bytes)}`, input: { file, bytes } }));
    expectFindings(await runBounded({ module: TARGETS, exportName: 'validateManifest', cases, ...BOUNDS }));
  }, 600_000);

  it('plugin.json nested 100,000 deep is plugin.over-limit, and mcp.json so nested is mcp.over-limit', async () => {
    const deep = new TextEncoder().encode(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    const [plugin, mcp] = expectFindings(
      await runBounded({
        module: TARGETS,
        exportName: 'validateManifest',
        cases: [
          { name: 'plugin.json', input: { file: 'plugin.json', bytes: deep } },
          { name: 'mcp.json', input: { file: 'mcp.json', bytes: deep } },
        ],
        ...BOUNDS,
      }),
    );
    expect(plugin).toEqual(['plugin.over-limit']);
    expect(mcp).toContain('mcp.over-limit');
  });
});

describe('loadPluginConfig: a hostile configuration is a PluginConfigError, in a bounded heap and time', () => {
  it('fuzz: hostile .yaml, .json and .toml files either load or throw PLUGIN_CONFIG_INVALID', async () => {
    const cases = fc
      .sample(fc.tuple(fc.constantFrom('.yaml' as const, '.json' as const, '.toml' as const), hostileDocument), {
        numRuns: 30,
        seed: SEED,
      })
      .map(([extension, bytes]) => ({ name: `${extension} ${label(bytes)}`, input: { extension, bytes } }));
    for (const outcome of await runBounded({ module: TARGETS, exportName: 'loadConfig', cases, ...BOUNDS })) {
      expect(['returned', 'threw'], `${outcome.name}: ${JSON.stringify(outcome)}`).toContain(outcome.status);
      if (outcome.status === 'threw')
        expect(outcome.error, `${outcome.name}: ${JSON.stringify(outcome.error)}`).toMatchObject({
          code: 'PLUGIN_CONFIG_INVALID',
        });
    }
  }, 600_000);

  it.each([
    ['400 `{` in YAML', '.yaml', `plugin:\n  name: ${'{'.repeat(400)}`, 'DOCUMENT_TOO_DEEP'],
    [
      'maps as keys of maps 40 deep (once exponential)',
      '.yaml',
      `name: x\nkeys: ${'{'.repeat(40)}a: 1${'}: 1'.repeat(40)}`,
      'DOCUMENT_SYNTAX',
    ],
    [
      'an alias bomb of 10^10 values',
      '.yaml',
      [
        'a0: &a0 [x, x, x, x, x, x, x, x, x, x]',
        ...Array.from({ length: 9 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(', ')}]`),
        'name: x',
      ].join('\n'),
      'DOCUMENT_TOO_COMPLEX',
    ],
    ['TOML tables 100 deep by dotted keys', '.toml', `name = "x"\n${'a.'.repeat(100)}a = 1`, 'DOCUMENT_TOO_DEEP'],
    ['a 200,000-character JSON string', '.json', `{"name": "x", "k": "${'x'.repeat(200_000)}"}`, 'DOCUMENT_TOO_LARGE'],
  ] as const)(
    '%s is a PluginConfigError whose cause has the code of the rule it breaks',
    async (_label, extension, text, causeCode) => {
      const [outcome] = await runBounded({
        module: TARGETS,
        exportName: 'loadConfig',
        cases: [{ name: extension, input: { extension, bytes: new TextEncoder().encode(text) } }],
        ...BOUNDS,
      });
      expect(outcome).toMatchObject({ status: 'threw', error: { code: 'PLUGIN_CONFIG_INVALID', causeCode } });
    },
  );
});
