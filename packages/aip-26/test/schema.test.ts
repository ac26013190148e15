import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  CODE_AJV_OPTIONS,
  CODE_SCHEMA_ID,
  CODE_SCHEMA_LEGACY_ID,
  ManifestValidationError,
  addCodeSchemas,
  checkCode,
  checkCodeWorkspaceManifest,
  checkRun,
  codeSchema,
  codeSchemaLegacy,
  codeSchemaRef,
  createCodeValidator,
  explainSchemaErrors,
} from '../src/schema/index.js';

const PUBLISHED = new URL('../../../schemas/aip-26/CODE.schema.json', import.meta.url);

/** A tool manifest schema as the usage skill's step 1 writes it, `$ref`ing the AIP-26 definitions. */
function hostSchema(id: string, ownId: string) {
  return {
    $id: ownId,
    type: 'object',
    required: ['kind', 'name', 'code', 'run'],
    properties: {
      kind: { const: 'tool' },
      name: { type: 'string' },
      code: { $ref: `${id}#/$defs/code` },
      run: { $ref: `${id}#/$defs/run` },
    },
  };
}

// The tool manifests of EXAMPLES.md (1–6), trimmed to the blocks the schema sees.
const GOOD_TOOLS = {
  'inline-only (EXAMPLES 1)': `
kind: tool
name: render-pdf
code:
  sources:
    - inline:
        path: tool.ts
        content: |
          export default {}
    - inline:
        path: package.json
        content: |
          { "type": "module" }
run: tool.ts
`,
  'exec form (EXAMPLES 2)': `
kind: tool
name: scrape-prices-csv
code:
  sources:
    - inline: { path: tool.py, content: "import sys\\n" }
    - inline: { path: requirements.txt, content: "requests==2.31.0\\n" }
run: ["python", "tool.py"]
`,
  'github shell + inline override (EXAMPLES 3)': `
kind: tool
name: fetch-customer-orders
code:
  sources:
    - github:
        repo: mycompany/mastra-tool-shell
        ref: 4f3a2b1ca73b5e9f8d2c1a0b3e6f7d4c8b1a2e3f
    - inline: { path: tool.ts, content: "export default {}" }
run: tool.ts
`,
  'string shorthand (EXAMPLES 4)': `
kind: tool
name: render-invoice
code: ./code-workspaces/render-utils
run: invoice.ts
`,
  'local with glob (EXAMPLES 5)': `
kind: tool
name: send-templated-email
code:
  sources:
    - inline: { path: tool.ts, content: "" }
    - local:
        path: shared/lib/render-mustache.ts
        as: lib/render-mustache.ts
    - local:
        path: shared/email-templates/
        as: templates/
        glob: "*.html"
run: tool.ts
`,
  'all four variants and explicit run': `
kind: tool
name: everything
code:
  sources:
    - github: { repo: org/shell, ref: v1.2.3, path: src/, as: vendor/ }
    - local: shared/lib/utils.ts
    - ref: ./shared/template-engine
    - ref: { path: ./shared/other }
    - inline: { path: tool.ts, content: "x" }
run: { shell: "npm run build && node dist/tool.js" }
`,
};

const GOOD_WORKSPACES = {
  'render-utils (EXAMPLES 4)': `
kind: code-workspace
name: render-utils
description: PDF + image rendering utilities
code:
  sources:
    - github:
        repo: mycompany/render-utils
        ref: v1.4.0
    - local: { path: package-lock.json }
runner:
  engine: sandbox
secrets:
  CLOUDINARY_KEY: { vault: cloudinary-api-key }
source: { origin: workspace }
`,
  'finance-tools (EXAMPLES 6)': `
kind: code-workspace
name: finance-tools
code:
  sources:
    - github:
        repo: mycompany/mastra-tool-shell
        ref: v2.0.1
    - local: { path: shared/finance/lib/ }
    - local: { path: shared/finance/package.json }
    - inline:
        path: config/region.ts
        content: |
          export const REGION = "EU"
`,
};

const tool = (overrides: Record<string, unknown>) => ({
  kind: 'tool',
  name: 't',
  code: { sources: [{ inline: { path: 'tool.ts', content: '' } }] },
  run: 'tool.ts',
  ...overrides,
});
const sources = (...list: unknown[]) => tool({ code: { sources: list } });

type Expected = [pointer: string, keyword: string, message: string][];

// [what, host manifest, every problem expected, in order]
const BAD_TOOLS: [string, unknown, Expected][] = [
  [
    'an empty inline path',
    sources({ inline: { path: '', content: '' } }),
    [['/code/sources/0/inline/path', 'minLength', 'must not be empty']],
  ],
  [
    'a source with none of the four keys',
    sources({}),
    [['/code/sources/0', 'oneOf', 'must have exactly one of the keys "inline", "local", "github", "ref"; found none']],
  ],
  [
    'a misspelt source key',
    sources({ inlin: { path: 'a', content: '' } }),
    [
      [
        '/code/sources/0',
        'oneOf',
        'must have exactly one of the keys "inline", "local", "github", "ref"; found none (it has "inlin")',
      ],
    ],
  ],
  [
    'a source with two keys',
    sources({ inline: { path: 'a', content: '' }, local: 'b' }),
    [
      [
        '/code/sources/0',
        'oneOf',
        'must have exactly one of the keys "inline", "local", "github", "ref"; found "inline", "local"',
      ],
    ],
  ],
  ['a source that is not an object', sources('tool.ts'), [['/code/sources/0', 'type', 'must be an object']]],
  [
    'an absolute code shorthand',
    tool({ code: '/etc' }),
    [['/code', 'pattern', 'must not start with "/": it is a workspace-relative path']],
  ],
  ['an empty code shorthand', tool({ code: '' }), [['/code', 'pattern', 'must not be empty']]],
  ['code of the wrong type', tool({ code: 5 }), [['/code', 'oneOf', 'must be a string or an object']]],
  ['code without sources', tool({ code: {} }), [['/code', 'required', 'is missing the required property "sources"']]],
  [
    'an empty sources list',
    tool({ code: { sources: [] } }),
    [['/code/sources', 'minItems', 'must have at least one item']],
  ],
  [
    'an unknown key beside sources',
    tool({ code: { sources: [{ ref: 'x' }], exclude: ['a'] } }),
    [['/code/exclude', 'additionalProperties', 'is not an allowed property (allowed: sources)']],
  ],
  [
    'inline without content',
    sources({ inline: { path: 'a.ts' } }),
    [['/code/sources/0/inline', 'required', 'is missing the required property "content"']],
  ],
  [
    'inline with content of the wrong type',
    sources({ inline: { path: 'a.ts', content: 5 } }),
    [['/code/sources/0/inline/content', 'type', 'must be a string']],
  ],
  [
    'inline with an unknown key',
    sources({ inline: { path: 'a.ts', content: '', mode: 493 } }),
    [['/code/sources/0/inline/mode', 'additionalProperties', 'is not an allowed property (allowed: path, content)']],
  ],
  ['an empty local shorthand', sources({ local: '' }), [['/code/sources/0/local', 'minLength', 'must not be empty']]],
  [
    'local without path',
    sources({ local: { as: 'x' } }),
    [['/code/sources/0/local', 'required', 'is missing the required property "path"']],
  ],
  [
    'local of the wrong type',
    sources({ local: 5 }),
    [['/code/sources/0/local', 'oneOf', 'must be a string or an object']],
  ],
  [
    'local with an empty as',
    sources({ local: { path: 'a', as: '' } }),
    [['/code/sources/0/local/as', 'minLength', 'must not be empty']],
  ],
  [
    'github repo without owner',
    sources({ github: { repo: 'noslash', ref: 'main' } }),
    [['/code/sources/0/github/repo', 'pattern', 'must have the form "<owner>/<name>"']],
  ],
  [
    'github without ref',
    sources({ github: { repo: 'a/b' } }),
    [['/code/sources/0/github', 'required', 'is missing the required property "ref"']],
  ],
  [
    'github with an empty ref',
    sources({ github: { repo: 'a/b', ref: '' } }),
    [['/code/sources/0/github/ref', 'minLength', 'must not be empty']],
  ],
  [
    'github with a token in it',
    sources({ github: { repo: 'a/b', ref: 'v1', token: 'x' } }),
    [
      [
        '/code/sources/0/github/token',
        'additionalProperties',
        'is not an allowed property (allowed: repo, ref, path, as)',
      ],
    ],
  ],
  [
    'ref with an empty path',
    sources({ ref: { path: '' } }),
    [['/code/sources/0/ref/path', 'minLength', 'must not be empty']],
  ],
  [
    'several bad sources: every problem',
    sources({ inline: { path: '', content: '' } }, { ref: 'ok' }, { github: { repo: 'x', ref: '' } }),
    [
      ['/code/sources/0/inline/path', 'minLength', 'must not be empty'],
      ['/code/sources/2/github/repo', 'pattern', 'must have the form "<owner>/<name>"'],
      ['/code/sources/2/github/ref', 'minLength', 'must not be empty'],
    ],
  ],
  ['run of the wrong type', tool({ run: 5 }), [['/run', 'oneOf', 'must be a string, an array or an object']]],
  ['an empty run', tool({ run: '' }), [['/run', 'minLength', 'must not be empty']]],
  ['an empty exec array', tool({ run: [] }), [['/run', 'minItems', 'must have at least one item']]],
  ['exec with a number', tool({ run: ['node', 1] }), [['/run/1', 'type', 'must be a string']]],
  [
    'an explicit run with no form',
    tool({ run: {} }),
    [['/run', 'oneOf', 'must have exactly one of the keys "file", "exec", "shell"; found none']],
  ],
  [
    'an explicit run with an empty file',
    tool({ run: { file: '' } }),
    [['/run/file', 'minLength', 'must not be empty']],
  ],
  [
    'an explicit run with two forms',
    tool({ run: { file: 'a.ts', exec: ['b'] } }),
    [['/run', 'oneOf', 'must have exactly one of the keys "file", "exec", "shell"; found "file", "exec"']],
  ],
  [
    'an explicit exec that is empty',
    tool({ run: { exec: [] } }),
    [['/run/exec', 'minItems', 'must have at least one item']],
  ],
  ['an explicit shell that is not a string', tool({ run: { shell: 5 } }), [['/run/shell', 'type', 'must be a string']]],
  [
    'the host manifest misses code',
    { kind: 'tool', name: 't', run: 'x.ts' },
    [['', 'required', 'is missing the required property "code"']],
  ],
  [
    'host and AIP-26 problems together',
    { kind: 'workflow', name: 't', code: { sources: [{}] }, run: [] },
    [
      ['/kind', 'const', 'must be "tool"'],
      ['/code/sources/0', 'oneOf', 'must have exactly one of the keys "inline", "local", "github", "ref"; found none'],
      ['/run', 'minItems', 'must have at least one item'],
    ],
  ],
];

const asTriples = (problems: readonly { pointer: string; keyword: string; message: string }[]) =>
  problems.map((p) => [p.pointer, p.keyword, p.message]);

describe('the published schema', () => {
  it('is CODE.schema.json byte for byte, under schemas/aip-26/, with the agentproto.sh $id', () => {
    const published = readFileSync(PUBLISHED, 'utf8');
    expect(JSON.parse(published)).toEqual(codeSchema);
    expect(codeSchema.$id).toBe(CODE_SCHEMA_ID);
    expect(CODE_SCHEMA_ID).toBe('https://agentproto.sh/schemas/aip-26/CODE.schema.json');
  });

  it('is also registered under the agentproto.dev $id the usage skill uses, identical otherwise', () => {
    expect(CODE_SCHEMA_LEGACY_ID).toBe('https://agentproto.dev/schemas/aip-26/CODE.schema.json');
    expect({ ...codeSchemaLegacy, $id: CODE_SCHEMA_ID }).toEqual(codeSchema);
    expect(codeSchemaLegacy.$defs).not.toBe(codeSchema.$defs);
  });

  it('is frozen, so no host can change what another validates with', () => {
    expect(Object.isFrozen(codeSchema)).toBe(true);
    expect(Object.isFrozen(codeSchema.$defs.source.oneOf[0])).toBe(true);
    expect(() => {
      (codeSchema.$defs as Record<string, unknown>).code = {};
    }).toThrow(TypeError);
  });

  it('compiles under full Ajv strict mode, strictTypes included', () => {
    const ajv = addCodeSchemas(new Ajv2020({ strict: true }));
    for (const def of ['code', 'run', 'source', 'codeWorkspaceManifest'] as const) {
      expect(ajv.getSchema(codeSchemaRef(def))).toBeTypeOf('function');
      expect(ajv.getSchema(codeSchemaRef(def, CODE_SCHEMA_LEGACY_ID))).toBeTypeOf('function');
    }
  });

  it('checks with strict mode, but lets host schemas leave out "type" (strictTypes off)', () => {
    expect(CODE_AJV_OPTIONS).toEqual({ allErrors: true, verbose: true, strict: true, strictTypes: false });
    expect(() => createCodeValidator().compile({ type: 'object', properties: { x: { typo: 1 } } })).toThrow(
      /unknown keyword/,
    );
  });
});

describe('a host manifest schema $refs the AIP-26 definitions, offline', () => {
  // Nothing may be fetched: the schemas resolve from memory or not at all.
  const fetchSpy = vi.fn(() => {
    throw new Error('network used');
  });
  beforeAll(() => vi.stubGlobal('fetch', fetchSpy));
  afterAll(() => {
    vi.unstubAllGlobals();
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  describe.each([
    ['agentproto.dev (the usage skill)', CODE_SCHEMA_LEGACY_ID],
    ['agentproto.sh (canonical)', CODE_SCHEMA_ID],
  ])('through the %s $id', (_, id) => {
    const ajv = createCodeValidator();
    const validate = ajv.compile(hostSchema(id, `https://host.example/${encodeURIComponent(id)}/tool.json`));

    it.each(Object.entries(GOOD_TOOLS))('accepts %s', (_, yaml) => {
      const manifest: unknown = parseYaml(yaml);
      expect(explainSchemaErrors(validate.errors)).toEqual([]);
      expect(validate(manifest)).toBe(true);
    });

    it.each(BAD_TOOLS)('refuses %s, at the exact pointer', (_, manifest, expected) => {
      expect(validate(manifest)).toBe(false);
      expect(asTriples(explainSchemaErrors(validate.errors))).toEqual(expected);
    });
  });

  it("compiles the usage skill's step 1 fragment verbatim, and the code-workspace $ref beside it", () => {
    const ajv = createCodeValidator();
    const step1 = {
      properties: {
        code: { $ref: 'https://agentproto.dev/schemas/aip-26/CODE.schema.json#/$defs/code' },
        run: { $ref: 'https://agentproto.dev/schemas/aip-26/CODE.schema.json#/$defs/run' },
      },
    };
    const validate = ajv.compile(step1);
    expect(validate({ code: './shared/render-utils', run: 'tool.ts' })).toBe(true);
    expect(validate({ code: { sources: [{ ref: '' }] }, run: 'tool.ts' })).toBe(false);
    expect(asTriples(explainSchemaErrors(validate.errors))).toEqual([
      ['/code/sources/0/ref', 'minLength', 'must not be empty'],
    ]);
    const workspace = ajv.compile({
      $ref: 'https://agentproto.dev/schemas/aip-26/CODE.schema.json#/$defs/codeWorkspaceManifest',
    });
    expect(workspace(parseYaml(GOOD_WORKSPACES['finance-tools (EXAMPLES 6)']))).toBe(true);
  });

  it('works in a host-made Ajv too, with the schemas added to it', () => {
    const ajv = addCodeSchemas(new Ajv2020({ allErrors: true, verbose: true }));
    expect(addCodeSchemas(ajv)).toBe(ajv);
    const validate = ajv.compile(hostSchema(CODE_SCHEMA_LEGACY_ID, 'https://host.example/mine.json'));
    expect(validate(tool({ code: '/abs' }))).toBe(false);
    expect(asTriples(explainSchemaErrors(validate.errors))).toEqual([
      ['/code', 'pattern', 'must not start with "/": it is a workspace-relative path'],
    ]);
  });

  it('refuses an Ajv that does not speak JSON Schema 2020-12, saying so', () => {
    expect(() => addCodeSchemas(new Ajv() as unknown as Ajv2020)).toThrow(/2020-12/);
  });

  it('passes errors through one by one when the Ajv is not verbose', () => {
    const ajv = addCodeSchemas(new Ajv2020({ allErrors: true }));
    const validate = ajv.compile(hostSchema(CODE_SCHEMA_ID, 'https://host.example/terse.json'));
    expect(validate(tool({ run: { file: '' } }))).toBe(false);
    expect(explainSchemaErrors(validate.errors).map((p) => p.pointer)).toContain('/run/file');
  });
});

describe('checkCode, checkRun, checkCodeWorkspaceManifest', () => {
  it.each(Object.entries(GOOD_TOOLS))('accept the blocks of %s', (_, yaml) => {
    const manifest = parseYaml(yaml) as { code: unknown; run: unknown };
    expect(checkCode(manifest.code)).toEqual({ ok: true });
    expect(checkRun(manifest.run)).toEqual({ ok: true });
  });

  it.each(BAD_TOOLS.filter(([, , expected]) => expected.every(([p]) => p.startsWith('/code'))))(
    'checkCode finds %s at the same pointers',
    (_, manifest, expected) => {
      const result = checkCode((manifest as { code: unknown }).code, { pointer: '/code' });
      expect(result.ok).toBe(false);
      expect(asTriples(result.ok ? [] : result.problems)).toEqual(expected);
    },
  );

  it.each(BAD_TOOLS.filter(([, , expected]) => expected.every(([p]) => p.startsWith('/run'))))(
    'checkRun finds %s at the same pointers',
    (_, manifest, expected) => {
      const result = checkRun((manifest as { run: unknown }).run, { pointer: '/run' });
      expect(result.ok).toBe(false);
      expect(asTriples(result.ok ? [] : result.problems)).toEqual(expected);
    },
  );

  it('points at the value itself without a pointer option', () => {
    expect(checkCode({ sources: [{ inline: { path: '', content: '' } }] })).toEqual({
      ok: false,
      problems: [{ pointer: '/sources/0/inline/path', keyword: 'minLength', message: 'must not be empty' }],
    });
    expect(checkRun(5)).toEqual({
      ok: false,
      problems: [{ pointer: '', keyword: 'oneOf', message: 'must be a string, an array or an object' }],
    });
  });

  it('refuses a source with two keys even when one of them is invalid (the schema alone lets it through)', () => {
    const code = { sources: [{ inline: { path: '', content: '' }, local: 'lib/' }] };
    expect(checkCode(code)).toEqual({
      ok: false,
      problems: [
        {
          pointer: '/sources/0',
          keyword: 'oneOf',
          message: 'must have exactly one of the keys "inline", "local", "github", "ref"; found "inline", "local"',
        },
      ],
    });
  });

  it('refuses an explicit run with two forms even when one is invalid', () => {
    expect(checkRun({ file: '', shell: 'x' })).toEqual({
      ok: false,
      problems: [
        {
          pointer: '',
          keyword: 'oneOf',
          message: 'must have exactly one of the keys "file", "exec", "shell"; found "file", "shell"',
        },
      ],
    });
  });

  it.each(Object.entries(GOOD_WORKSPACES))('accepts the code-workspace manifest %s', (_, yaml) => {
    expect(checkCodeWorkspaceManifest(parseYaml(yaml))).toEqual({ ok: true });
  });

  it.each([
    [
      'a tool, not a code-workspace',
      { kind: 'tool', name: 'x', code: 'a' },
      [['/kind', 'const', 'must be "code-workspace"']],
    ],
    ['no name', { kind: 'code-workspace', code: 'a' }, [['', 'required', 'is missing the required property "name"']]],
    ['no code', { kind: 'code-workspace', name: 'x' }, [['', 'required', 'is missing the required property "code"']]],
    ['an empty name', { kind: 'code-workspace', name: '', code: 'a' }, [['/name', 'minLength', 'must not be empty']]],
    [
      'bad code and run',
      {
        kind: 'code-workspace',
        name: 'x',
        code: { sources: [{ github: { repo: 'a/b', ref: 'v1', path: 5 } }] },
        run: { exec: 'node' },
      },
      [
        ['/code/sources/0/github/path', 'type', 'must be a string'],
        ['/run/exec', 'type', 'must be an array'],
      ],
    ],
    [
      'two forms of run',
      { kind: 'code-workspace', name: 'x', code: 'a', run: { exec: [], shell: 'x' } },
      [['/run', 'oneOf', 'must have exactly one of the keys "file", "exec", "shell"; found "exec", "shell"']],
    ],
    ['not an object', 'code-workspace', [['', 'type', 'must be an object']]],
  ] as const)('refuses a code-workspace manifest with %s', (_, manifest, expected) => {
    const result = checkCodeWorkspaceManifest(manifest);
    expect(result.ok).toBe(false);
    expect(asTriples(result.ok ? [] : result.problems)).toEqual(expected);
  });

  it('validates through the codeWorkspaceManifest $def from a host schema too', () => {
    const ajv = createCodeValidator();
    const validate = ajv.compile({ $ref: `${CODE_SCHEMA_LEGACY_ID}#/$defs/codeWorkspaceManifest` });
    expect(validate(parseYaml(GOOD_WORKSPACES['render-utils (EXAMPLES 4)']))).toBe(true);
    expect(validate({ kind: 'code-workspace', name: 'x', code: 5 })).toBe(false);
    expect(asTriples(explainSchemaErrors(validate.errors))).toEqual([
      ['/code', 'oneOf', 'must be a string or an object'],
    ]);
  });
});

describe('ManifestValidationError', () => {
  it('carries every problem, a stable code, and lists them in its message', () => {
    const result = checkCode({ sources: [{}, { inline: { path: '' } }] }, { pointer: '/code' });
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    const error = new ManifestValidationError(problems, { subject: 'tools/render-pdf/manifest.yaml' });
    expect(error.code).toBe('AIP26_MANIFEST_INVALID');
    expect(error.problems).toBe(problems);
    expect(error.message).toBe(
      'tools/render-pdf/manifest.yaml invalid (3 problems): ' +
        '/code/sources/0: must have exactly one of the keys "inline", "local", "github", "ref"; found none; ' +
        '/code/sources/1/inline: is missing the required property "content"; ' +
        '/code/sources/1/inline/path: must not be empty',
    );
  });

  it('lists at most ten problems in its message and keeps all of them', () => {
    const result = checkCode({ sources: Array.from({ length: 12 }, () => ({})) });
    const problems = result.ok ? [] : result.problems;
    const error = new ManifestValidationError(problems);
    expect(error.problems).toHaveLength(12);
    expect(error.message).toMatch(/^manifest invalid \(12 problems\): .*… and 2 more$/);
  });
});
