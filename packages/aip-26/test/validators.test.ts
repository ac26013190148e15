import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VALIDATORS_FILE, validatorsSource } from '../scripts/validators.js';
import { CODE_SCHEMA_ID, codeSchemaRef, createCodeValidator } from '../src/schema/index.js';
import { CODE_VALIDATORS } from '../src/generated/validators.js';

// checkCode, checkRun and checkCodeWorkspaceManifest run validators compiled at build (Ajv
// standalone) from the published schema; the file in the tree must be exactly what the schema
// gives today, and must report what Ajv compiling the schema at run time reports.
describe('validators compiled at build', () => {
  it(`${VALIDATORS_FILE} is what scripts/validators.ts generates from the published schema`, async () => {
    const inTree = readFileSync(new URL(`../${VALIDATORS_FILE}`, import.meta.url), 'utf8');
    expect(inTree === (await validatorsSource()), `${VALIDATORS_FILE} is stale: run the package build`).toBe(true);
  });

  const samples: Record<keyof typeof CODE_VALIDATORS, unknown[]> = {
    code: [
      'workspaces/base',
      '/absolute',
      { sources: [{ local: 'src/' }, { inline: { path: 'a.txt', content: 'x' } }] },
      { sources: [] },
      { sources: [{ local: 'src/', inline: { path: 'a', content: '' } }] },
      { sources: [{ github: { repo: 'acme/x', ref: 'main', path: 'p' } }, { ref: 7 }] },
      { sources: [{ local: 'src/' }], extra: true },
      42,
    ],
    run: [
      'node main.js',
      ['node', 'main.js'],
      { file: 'main.py' },
      { exec: [] },
      { shell: 3 },
      { file: 'a', exec: ['b'] },
      null,
    ],
    codeWorkspaceManifest: [
      { kind: 'code-workspace', code: { sources: [{ local: 'src/' }] } },
      { kind: 'code-workspace' },
      { kind: 'tool', code: 'x', run: 'node a.js' },
      [],
    ],
  };

  it.each(Object.keys(samples) as (keyof typeof CODE_VALIDATORS)[])(
    '$defs/%s reports what Ajv compiling the schema at run time reports, verbose errors included',
    (def) => {
      const compiled = createCodeValidator().getSchema(codeSchemaRef(def, CODE_SCHEMA_ID))!;
      let refused = 0;
      for (const sample of samples[def]) {
        const generated = CODE_VALIDATORS[def];
        const ok = generated(sample);
        expect(ok).toBe(compiled(sample));
        expect(generated.errors ?? null).toStrictEqual(compiled.errors ?? null);
        if (!ok) refused += 1;
      }
      expect(refused).toBeGreaterThan(0);
    },
  );
});
