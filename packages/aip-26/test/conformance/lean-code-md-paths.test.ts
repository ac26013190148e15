import { describe, expect, it } from 'vitest';
import {
  type Code,
  defineCode,
  defineCodeWithReport,
  planCode,
  nodeWorkspaceFs,
  subprocessRunner,
} from '../../src/index.js';
import { extractWithGnuTar, makeWorkspace } from '../support/workspace.js';

// aip-26.md, "CODE.md — lean composable form", the spec's own example, verbatim:
//   # .code/notion-search/CODE.md (lean form)
//   source: { local: "./search.py" }
//   run: "python search.py"
// With "`local.as` — Bundle-internal target. Default = same as `path`" (§"Source variant:
// `local`"), the file lands at `search.py`, where `run` (bundle-internal, §"Path semantics")
// looks for it: paths in a lean CODE.md are read relative to its folder, and land where the
// same relative path says.
const SPEC_LEAN_CODE_MD = `---
schema: code/v2
id: "@<owner>/code/notion-search"
version: 1.0.0
description: Notion search MCP server (Python)

# Lean — only source + run inline
source: { local: "./search.py" }
run: "python search.py"

# Everything else composes
runner: { ref: "./RUNNER.md" }            # or inline { engine, language, limits }
driver: { ref: "./DRIVER.md" }            # AIP-30 binding (implements + expose)
sandbox: { ref: "@agentik/python-mcp" }   # AIP-36 — where it runs
secrets: { ref: "./SECRETS.md" }          # AIP-19 — what creds it can reveal
identity: { ref: "operator://current" }   # AIP-23 — code-authoring trail
network: { egress: ["api.notion.com"] }   # inline (small block)
---
# notion-search
`;

async function bundleOf(workspaceRoot: string, code: Code): Promise<Map<string, { text: string }>> {
  return extractWithGnuTar(await defineCode({ workspaceRoot, code }));
}

describe('aip-26.md "CODE.md — lean composable form": paths relative to the CODE.md folder, landing at the same relative path', () => {
  it('the spec\'s example: `source: { local: "./search.py" }` lands at search.py, and `run: "python search.py"` runs it', async () => {
    const workspaceRoot = await makeWorkspace({
      '.code/notion-search/CODE.md': SPEC_LEAN_CODE_MD,
      '.code/notion-search/search.py': 'print("notion search ran")\n',
    });
    const bundle = await defineCode({ workspaceRoot, code: './.code/notion-search' });
    expect([...(await extractWithGnuTar(bundle)).keys()]).toEqual(['search.py']);
    const result = await subprocessRunner().run({
      bundle,
      run: 'python search.py',
      env: { PATH: process.env.PATH! },
      timeoutMs: 30_000,
    });
    expect(result.exitCode, result.stderr.toString()).toBe(0);
    expect(result.stdout.toString()).toBe('notion search ran\n');
  });

  it('folders, lists of sources and globs land at their path relative to the CODE.md, not at its place in the workspace', async () => {
    const workspaceRoot = await makeWorkspace({
      'tools/py/search/CODE.md':
        '---\nschema: code/v2\nsource:\n  - local: ./lib/\n  - local: "src/*.py"\n  - local: { path: ./conf/app.toml }\nrun: "python src/main.py"\n---\n',
      'tools/py/search/lib/util.py': 'u',
      'tools/py/search/lib/deep/x.py': 'x',
      'tools/py/search/src/main.py': 'm',
      'tools/py/search/src/notes.txt': 'not matched',
      'tools/py/search/conf/app.toml': 'a = 1',
    });
    expect([...(await bundleOf(workspaceRoot, './tools/py/search')).keys()].sort()).toEqual([
      'conf/app.toml',
      'lib/deep/x.py',
      'lib/util.py',
      'src/main.py',
    ]);
  });

  // §"Source variant: `local`": `as` is the bundle-internal target; it is honoured as written.
  it('an explicit `as` still places the file where it says', async () => {
    const workspaceRoot = await makeWorkspace({
      '.code/x/CODE.md':
        '---\nschema: code/v2\nsource:\n  - local: { path: ./search.py, as: bin/search.py }\n  - local: { path: ./lib/, as: vendor/ }\n---\n',
      '.code/x/search.py': 's',
      '.code/x/lib/a.py': 'a',
    });
    expect([...(await bundleOf(workspaceRoot, './.code/x')).keys()].sort()).toEqual(['bin/search.py', 'vendor/a.py']);
  });

  // §"Path semantics": `code.sources[].local.path` is workspace-relative in the rich form:
  // a `kind: code-workspace` manifest's files keep their workspace path (unchanged).
  it('a rich code-workspace manifest keeps workspace-relative paths (as = path)', async () => {
    const workspaceRoot = await makeWorkspace({
      '.code-workspaces/utils/manifest.yaml':
        'kind: code-workspace\nname: utils\ncode:\n  sources:\n    - local: shared/utils/\n',
      'shared/utils/fmt.ts': 'fmt',
    });
    expect([...(await bundleOf(workspaceRoot, './.code-workspaces/utils')).keys()]).toEqual(['shared/utils/fmt.ts']);
  });

  it('the plan reads from the CODE.md folder and records where each source lands', async () => {
    const workspaceRoot = await makeWorkspace({
      '.code/x/CODE.md': '---\nschema: code/v2\nsource: { local: "./search.py" }\n---\n',
      '.code/x/search.py': 's',
    });
    const plan = await planCode('./.code/x', nodeWorkspaceFs(workspaceRoot));
    expect(plan.sources).toMatchObject([
      { kind: 'local', path: '.code/x/search.py', declaredPath: 'search.py', as: undefined },
    ]);
  });

  // §"Security considerations" 1: relative to its folder, a lean path still stays in the workspace.
  it('a lean path is still refused when it leaves the CODE.md folder by `..`', async () => {
    const workspaceRoot = await makeWorkspace({
      '.code/x/CODE.md': '---\nschema: code/v2\nsource: { local: "../../secret.txt" }\n---\n',
      'secret.txt': 's',
    });
    await expect(defineCodeWithReport({ workspaceRoot, code: './.code/x' })).rejects.toMatchObject({
      code: 'AIP26_SOURCE_UNRESOLVED',
      reason: 'unsafe-path',
    });
  });
});
