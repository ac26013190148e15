import { execFileSync } from 'node:child_process';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../support/run.js';
import { scratchFolders } from '../support/scratch.js';

const scratch = scratchFolders();

async function workspace(files: Record<string, string>): Promise<string> {
  const dir = await scratch();
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

// ADAPTER.md, "Error surface": "`ManifestValidationError` — `code` block fails schema —
// Trust UI: "manifest invalid" + per-issue details", surfaced "BEFORE the runner is
// provisioned". Every block is checked before it is used, whatever else the manifest has.
describe('ADAPTER.md "Error surface": code check, bundle and run refuse a malformed code block as AIP26_MANIFEST_INVALID, run or not', () => {
  const malformed = [
    'code:\n  sources:\n    - 42\n',
    'code:\n  sources:\n    - local: {}\n',
    'code:\n  sources:\n    - github: { repo: o/r }\n',
    'code:\n  sources:\n    - ref: {}\n',
    'code: { sources: null }\n',
    'code: 7\n',
    'name: no-code\n',
  ];
  it.each(malformed.flatMap((text) => (['check', 'bundle', 'run'] as const).map((sub) => [sub, text] as const)))(
    'code %s with %j and run: tool.js',
    async (sub, text) => {
      const dir = await workspace({ 'tool.yaml': `${text}run: tool.js\n` });
      const outcome = await run(
        ['code', sub, join(dir, 'tool.yaml'), '--out', join(dir, 'b.tgz'), '--store', join(dir, 'cache')].filter(
          (arg, i, all) => sub === 'bundle' || (arg !== '--out' && all[i - 1] !== '--out'),
        ),
      );
      expect(outcome.code).toBe(1);
      expect(outcome.stderr).not.toContain('unexpected error');
      expect(outcome.stderr).toMatch(/^agentproto: AIP26_MANIFEST_INVALID: code block invalid/);
      expect(outcome.stderr).toContain('/code');
    },
  );
});

// ADAPTER.md "File path form": the run file is `<bundle>/<run>`; EXAMPLES.md 6: "`run:
// reports/quarterly.ts` resolves inside the merged tarball". `run` already refused a file
// the bundle lacks (AIP26_RUN_FILE_MISSING); check and bundle now give the same refusal.
describe('EXAMPLES.md 6 "run … resolves inside the merged tarball": check and bundle refuse a run file missing from the bundle', () => {
  const MANIFEST = 'code:\n  sources:\n    - inline: { path: main.js, content: "console.log(1)" }\nrun: tool.js\n';

  it.each(['check', 'bundle', 'run'] as const)(
    'code %s: AIP26_RUN_FILE_MISSING naming tool.js, exit 1',
    async (sub) => {
      const dir = await workspace({ 'tool.yaml': MANIFEST });
      const out = join(dir, 'bundle.tar.gz');
      const outcome = await run([
        'code',
        sub,
        join(dir, 'tool.yaml'),
        '--store',
        join(dir, 'cache'),
        ...(sub === 'bundle' ? ['--out', out] : []),
      ]);
      expect(outcome.code).toBe(1);
      expect(outcome.stdout).toBe('');
      expect(outcome.stderr).toMatch(/^agentproto: AIP26_RUN_FILE_MISSING: run file "tool\.js" is not in the bundle/);
      // Nothing was written for a bundle that cannot run.
      await expect(access(out)).rejects.toThrow();
    },
  );

  it('a --workspace that is not a folder is named, before anything is read', async () => {
    const dir = await workspace({ 'tool.yaml': MANIFEST });
    const outcome = await run([
      'code',
      'check',
      join(dir, 'tool.yaml'),
      '--workspace',
      join(dir, 'absent'),
      '--store',
      join(dir, 'cache'),
    ]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe(
      `agentproto: CLI_PATH_NOT_FOUND: --workspace ${join(dir, 'absent')}: folder does not exist\n`,
    );
  });

  it('a run file the bundle holds passes check and bundle', async () => {
    const dir = await workspace({ 'tool.yaml': MANIFEST.replace('run: tool.js', 'run: main.js') });
    expect((await run(['code', 'check', join(dir, 'tool.yaml'), '--store', join(dir, 'cache')])).code).toBe(0);
    expect(
      (
        await run([
          'code',
          'bundle',
          join(dir, 'tool.yaml'),
          '--out',
          join(dir, 'b.tgz'),
          '--store',
          join(dir, 'cache'),
        ])
      ).code,
    ).toBe(0);
  });
});

// aip-26.md "CODE.md — lean composable form": "Hosts MUST accept both" forms, and its
// example `source: { local: "./search.py" }` with `run: "python search.py"`: the CLI reads a
// CODE.md's front matter, paths relative to its folder, and the run finds the file at the
// bundle root.
describe('aip-26.md "CODE.md — lean composable form": code bundle and run take a lean CODE.md', () => {
  const CODE_MD =
    '---\nschema: code/v2\nid: "@acme/code/notion-search"\nsource: { local: "./search.py" }\nrun: "python search.py"\nnetwork: { egress: ["api.notion.com"] }\n---\n# notion-search\n\nThe body is documentation.\n';

  it('code run .code/notion-search/CODE.md runs search.py, with the CODE.md folder or the workspace as root', async () => {
    const dir = await workspace({
      '.code/notion-search/CODE.md': CODE_MD,
      '.code/notion-search/search.py': 'print("searched")\n',
    });
    const manifest = join(dir, '.code/notion-search/CODE.md');
    // The example's `python` is not a system program on Debian (python3 is), and a pyenv or
    // venv `python` lives under the home folder, which an isolated run never sees: the
    // example as written runs without isolation.
    for (const extra of [[], ['--workspace', dir]]) {
      const outcome = await run(['code', 'run', manifest, '--store', join(dir, 'cache'), '--no-isolation', ...extra]);
      expect(outcome.code, outcome.stderr).toBe(0);
      expect(outcome.stdout).toBe('searched\n');
    }
  });

  it('isolated, the same CODE.md with the system python3 runs, and its network block is left to the user', async () => {
    const dir = await workspace({
      '.code/notion-search/CODE.md': CODE_MD.replace('run: "python search.py"', 'run: "python3 search.py"'),
      '.code/notion-search/search.py': 'print("searched")\n',
    });
    const manifest = join(dir, '.code/notion-search/CODE.md');
    const outcome = await run(['code', 'run', manifest, '--store', join(dir, 'cache'), '--env', 'PATH=/usr/bin:/bin']);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toBe('searched\n');
    expect(outcome.stderr).toBe(
      'note: the manifest asks for network access to api.notion.com; the run has no network but what you grant: --egress api.notion.com\n',
    );
  });

  it('code bundle puts search.py at the bundle root', async () => {
    const dir = await workspace({
      '.code/notion-search/CODE.md': CODE_MD,
      '.code/notion-search/search.py': 'print("searched")\n',
    });
    const out = join(dir, 'bundle.tar.gz');
    const outcome = await run([
      'code',
      'bundle',
      join(dir, '.code/notion-search/CODE.md'),
      '--workspace',
      dir,
      '--out',
      out,
      '--store',
      join(dir, 'cache'),
    ]);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(execFileSync('tar', ['-tzf', out]).toString().split('\n').filter(Boolean)).toEqual(['search.py']);
  });

  it('a CODE.md without schema: code/v2, or outside the workspace, is refused by name', async () => {
    const dir = await workspace({ 'x/CODE.md': '---\nkind: tool\n---\n', 'w/y.txt': '' });
    const notLean = await run(['code', 'check', join(dir, 'x/CODE.md'), '--store', join(dir, 'cache')]);
    expect(notLean.code).toBe(1);
    expect(notLean.stderr).toContain('schema: code/v2');
    const outside = await run([
      'code',
      'check',
      join(dir, 'x/CODE.md'),
      '--workspace',
      join(dir, 'w'),
      '--store',
      join(dir, 'cache'),
    ]);
    expect(outside.code).toBe(1);
    expect(outside.stderr).not.toContain('unexpected error');
  });
});

// ADAPTER.md "Inheritance semantics": "`runner` — Inherited. Tool MAY override fields
// field-by-field"; at every level the referencing manifest wins. `code run` applies the
// runner limits the manifest ends up with.
describe('ADAPTER.md "Inheritance semantics": code run applies the inherited runner.limits.timeout_ms', () => {
  const SLOW = 'setTimeout(() => console.log("finished"), 1500)';

  it('a timeout set only by the referenced code-workspace applies', async () => {
    const dir = await workspace({
      'tool.yaml': 'code: ./cw/a\nrun: slow.js\n',
      'cw/a/manifest.yaml': `kind: code-workspace\ncode: { sources: [ { inline: { path: slow.js, content: ${JSON.stringify(SLOW)} } } ] }\nrunner: { limits: { timeout_ms: 300 } }\n`,
    });
    const outcome = await run(['code', 'run', join(dir, 'tool.yaml'), '--store', join(dir, 'cache')]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('timed out after 300 ms');
  });

  it("in a chain a → b, a's timeout wins over b's", async () => {
    const dir = await workspace({
      'tool.yaml': 'code: ./cw/a\nrun: slow.js\n',
      'cw/a/manifest.yaml':
        'kind: code-workspace\ncode: { sources: [ { ref: cw/b } ] }\nrunner: { limits: { timeout_ms: 30000 } }\n',
      'cw/b/manifest.yaml': `kind: code-workspace\ncode: { sources: [ { inline: { path: slow.js, content: ${JSON.stringify(SLOW)} } } ] }\nrunner: { limits: { timeout_ms: 300 } }\n`,
    });
    const outcome = await run(['code', 'run', join(dir, 'tool.yaml'), '--store', join(dir, 'cache')]);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toBe('finished\n');
  });
});
