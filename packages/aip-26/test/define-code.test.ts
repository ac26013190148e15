import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  BundleSizeError,
  type Code,
  type GithubAccess,
  ManifestValidationError,
  SourceResolutionError,
  defineCode,
  defineCodeWithReport,
  scanCode,
  writeBundle,
} from '../src/index.js';
import { extractWithGnuTar, makeWorkspace, snapshot } from './support/workspace.js';

/** An in-memory GitHub stand-in: repo → commit → files; refs map names to commits. */
function fakeGithub(
  repos: Record<string, { refs: Record<string, string>; commits: Record<string, Record<string, string>> }>,
) {
  const calls: string[] = [];
  const access: GithubAccess = {
    async resolveRef(repo, ref) {
      calls.push(`resolve ${repo} ${ref}`);
      const commit = repos[repo]?.refs[ref];
      if (!commit) throw new Error(`no ref ${ref}`);
      return commit;
    },
    async fetch(repo, ref, subpath) {
      calls.push(`fetch ${repo} ${ref} ${subpath ?? ''}`);
      const files = repos[repo]?.commits[ref];
      if (!files) throw new Error(`no commit ${ref}`);
      const prefix = subpath ? `${subpath.replace(/\/$/, '')}/` : '';
      const entries = Object.entries(files)
        .filter(([path]) => path.startsWith(prefix))
        .map(([path, text]) => ({ path: path.slice(prefix.length), data: Buffer.from(text) }));
      return writeBundle(entries);
    },
  };
  return { access, calls };
}

const SHELL_SHA = '4f3a2b1ca73b5e9f8d2c1a0b3e6f7d4c8b1a2e3f';

describe('defineCode', () => {
  it('bundles inline sources (EXAMPLES 1) into a tar.gz GNU tar extracts exactly', async () => {
    const workspaceRoot = await makeWorkspace({});
    const bundle = await defineCode({
      workspaceRoot,
      code: {
        sources: [
          { inline: { path: 'tool.ts', content: 'export default 1\n' } },
          { inline: { path: 'package.json', content: '{"type":"module"}\n' } },
        ],
      },
    });
    const files = await extractWithGnuTar(bundle);
    expect([...files.keys()].sort()).toEqual(['package.json', 'tool.ts']);
    expect(files.get('tool.ts')).toEqual({ text: 'export default 1\n', mode: 0o644 });
  });

  it('gives the same bytes for the same inputs', async () => {
    const workspaceRoot = await makeWorkspace({
      'lib/a.ts': 'a',
      'lib/b/c.ts': 'c',
      'run.sh': { content: 'echo', mode: 0o755 },
    });
    const code: Code = {
      sources: [{ local: 'lib/' }, { local: 'run.sh' }, { inline: { path: 'z.txt', content: 'z' } }],
    };
    const a = await defineCode({ workspaceRoot, code });
    const b = await defineCode({ workspaceRoot, code });
    expect(createHash('sha256').update(a).digest('hex')).toBe(createHash('sha256').update(b).digest('hex'));
    const files = await extractWithGnuTar(a);
    expect(files.get('run.sh')?.mode).toBe(0o755);
    expect([...files.keys()].sort()).toEqual(['lib/a.ts', 'lib/b/c.ts', 'run.sh', 'z.txt']);
  });

  it('returns from defineCode (which takes no digest) the bytes defineCodeWithReport digests, on each way a bundle is built', async () => {
    const workspaceRoot = await makeWorkspace({
      'lib/a.ts': 'a'.repeat(70_000),
      'lib/b/c.ts': 'c',
      'run.sh': { content: 'echo', mode: 0o755 },
    });
    const codes: Code[] = [
      // One folder: packed while it is listed.
      { sources: [{ local: 'lib/' }] },
      // Several sources: merged, then packed.
      { sources: [{ local: 'lib/' }, { local: 'run.sh' }, { inline: { path: 'z.txt', content: 'z' } }] },
    ];
    for (const code of codes) {
      const bundle = await defineCode({ workspaceRoot, code });
      const { bundle: reported, report } = await defineCodeWithReport({ workspaceRoot, code });
      expect(bundle.equals(reported)).toBe(true);
      expect(report.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(createHash('sha256').update(bundle).digest('hex')).toBe(report.sha256);
      expect(report.compressedBytes).toBe(bundle.length);
    }
  });

  it('maps local files, folders and globs with as (EXAMPLES 5)', async () => {
    const workspaceRoot = await makeWorkspace({
      'shared/lib/render-mustache.ts': 'render',
      'shared/email-templates/welcome.html': 'w',
      'shared/email-templates/bye.html': 'b',
      'shared/email-templates/notes.md': 'n',
      'shared/email-templates/deep/x.html': 'x',
    });
    const { report, bundle } = await defineCodeWithReport({
      workspaceRoot,
      code: {
        sources: [
          { inline: { path: 'tool.ts', content: 't' } },
          { local: { path: 'shared/lib/render-mustache.ts', as: 'lib/render-mustache.ts' } },
          { local: { path: 'shared/email-templates/', as: 'templates/', glob: '*.html' } },
        ],
      },
    });
    expect([...(await extractWithGnuTar(bundle)).keys()].sort()).toEqual([
      'lib/render-mustache.ts',
      'templates/bye.html',
      'templates/welcome.html',
      'tool.ts',
    ]);
    expect(report.sources.map((s) => [s.source, s.files])).toEqual([
      ['sources[0]', 1],
      ['sources[1]', 1],
      ['sources[2]', 2],
    ]);
    expect(report.sha256).toBe(createHash('sha256').update(bundle).digest('hex'));
  });

  it('keeps a folder under its own path when no as is given, and accepts a glob path', async () => {
    const workspaceRoot = await makeWorkspace({ 'src/a.ts': 'a', 'src/b.js': 'b', 'src/x/c.ts': 'c' });
    const folder = await extractWithGnuTar(await defineCode({ workspaceRoot, code: { sources: [{ local: 'src' }] } }));
    expect([...folder.keys()].sort()).toEqual(['src/a.ts', 'src/b.js', 'src/x/c.ts']);
    const glob = await extractWithGnuTar(
      await defineCode({ workspaceRoot, code: { sources: [{ local: 'src/**/*.ts' }] } }),
    );
    expect([...glob.keys()].sort()).toEqual(['src/a.ts', 'src/x/c.ts']);
  });

  it('lets the last source win on a path collision (overlay)', async () => {
    const workspaceRoot = await makeWorkspace({ 'tool.ts': 'from workspace' });
    const files = await extractWithGnuTar(
      await defineCode({
        workspaceRoot,
        code: { sources: [{ local: 'tool.ts' }, { inline: { path: 'tool.ts', content: 'from inline' } }] },
      }),
    );
    expect(files.get('tool.ts')?.text).toBe('from inline');
  });

  it('resolves a ref to a rich code-workspace and a lean CODE.md', async () => {
    const workspaceRoot = await makeWorkspace({
      '.code-workspaces/utils/manifest.yaml':
        'kind: code-workspace\nname: utils\ncode:\n  sources:\n    - local: shared/utils/\n    - ref: .code/py\n',
      'shared/utils/fmt.ts': 'fmt',
      '.code/py/CODE.md':
        '---\nschema: code/v2\nsource: { local: "./search.py" }\nrun: "python search.py"\n---\n# search\n',
      '.code/py/search.py': 'print(1)',
    });
    const { bundle, report } = await defineCodeWithReport({ workspaceRoot, code: './.code-workspaces/utils' });
    // The lean CODE.md's `./search.py` is read from its folder and lands at `search.py` (as = path).
    expect([...(await extractWithGnuTar(bundle)).keys()].sort()).toEqual(['search.py', 'shared/utils/fmt.ts']);
    expect(report.workspaces).toEqual(['.code-workspaces/utils', '.code/py']);
    expect(report.sources.map((s) => s.source)).toEqual([
      'sources[0] → ref ".code-workspaces/utils" → sources[0]',
      'sources[0] → ref ".code-workspaces/utils" → sources[1] → ref ".code/py" → sources[0]',
    ]);
  });

  it('follows workspace links that stay inside, bundling their content', async () => {
    const workspaceRoot = await makeWorkspace({
      'real/a.ts': 'A',
      'lib/alias.ts': { symlink: '../real/a.ts' },
      dirlink: { symlink: 'real' },
    });
    const files = await extractWithGnuTar(
      await defineCode({
        workspaceRoot,
        code: { sources: [{ local: 'lib/' }, { local: { path: 'dirlink', as: 'd/' } }] },
      }),
    );
    expect(files.get('lib/alias.ts')?.text).toBe('A');
    expect(files.get('d/a.ts')?.text).toBe('A');
  });

  it('fetches a github source through the connector, by resolved commit, under as', async () => {
    const workspaceRoot = await makeWorkspace({});
    const { access, calls } = fakeGithub({
      'mycompany/shell': {
        refs: { 'v1.2.3': SHELL_SHA },
        commits: { [SHELL_SHA]: { 'package.json': '{}', 'lib/base.ts': 'base', 'src/x.ts': 'x' } },
      },
    });
    const { bundle, report } = await defineCodeWithReport({
      workspaceRoot,
      github: access,
      code: {
        sources: [
          { github: { repo: 'mycompany/shell', ref: 'v1.2.3' } },
          { github: { repo: 'mycompany/shell', ref: SHELL_SHA, path: 'src/', as: 'vendor/' } },
        ],
      },
    });
    expect([...(await extractWithGnuTar(bundle)).keys()].sort()).toEqual([
      'lib/base.ts',
      'package.json',
      'src/x.ts',
      'vendor/x.ts',
    ]);
    expect(report.sources.map((s) => s.commit)).toEqual([SHELL_SHA, SHELL_SHA]);
    expect(calls).toEqual([
      `resolve mycompany/shell v1.2.3`,
      `fetch mycompany/shell ${SHELL_SHA} `,
      `fetch mycompany/shell ${SHELL_SHA} src`,
    ]);
  });

  it('builds a plan of pinned sources once, then reads it back from the cache without fetching', async () => {
    const { openContentStore } = await import('@agentproto/content-cache');
    const cache = await openContentStore({ root: `${await makeWorkspace({})}/cache` });
    const workspaceRoot = await makeWorkspace({ 'a.ts': 'a' });
    const { access, calls } = fakeGithub({ 'o/r': { refs: {}, commits: { [SHELL_SHA]: { 'x.ts': 'x' } } } });
    const code = { sources: [{ github: { repo: 'o/r', ref: SHELL_SHA } }, { inline: { path: 'i.ts', content: 'i' } }] };
    const first = await defineCodeWithReport({ workspaceRoot, github: access, code, cache });
    const second = await defineCodeWithReport({ workspaceRoot, github: access, code, cache });
    expect(calls).toEqual([`fetch o/r ${SHELL_SHA} `]);
    expect(second.bundle.equals(first.bundle)).toBe(true);
    expect(second.report).toEqual(first.report);
    // A workspace source is read every time: its file may have changed.
    const withLocal = { sources: [...code.sources, { local: 'a.ts' }] };
    await defineCodeWithReport({ workspaceRoot, github: access, code: withLocal, cache });
    await defineCodeWithReport({ workspaceRoot, github: access, code: withLocal, cache });
    expect(calls).toHaveLength(3);
  });

  it('scans every source without building a tarball', async () => {
    const workspaceRoot = await makeWorkspace({ 'a.ts': 'aaaa' });
    const report = await scanCode({
      workspaceRoot,
      code: { sources: [{ local: 'a.ts' }, { inline: { path: 'b.ts', content: 'bb' } }] },
    });
    expect(report).toMatchObject({ files: 2, bytes: 6 });
  });
});

type Expectation = { error: new (...args: never[]) => Error; reason?: string };

const workspaceSpec = {
  'tool.ts': 'tool',
  'lib/a.ts': 'a',
  'Lib/b.ts': 'b',
  'big.bin': 'x'.repeat(2048),
  'link-out': { symlink: '../../../../etc/passwd' },
  'loop-a': { symlink: 'loop-b' },
  'loop-b': { symlink: 'loop-a' },
  dangling: { symlink: 'nothing-here' },
  'links/ok.ts': 'ok',
  'links/out': { symlink: '../../../../../etc' },
  '.cw/self/manifest.yaml': 'kind: code-workspace\ncode: ./.cw/self\n',
  '.cw/a/manifest.yaml': 'kind: code-workspace\ncode: ./.cw/b\n',
  '.cw/b/manifest.yaml': 'kind: code-workspace\ncode: ./.cw/a\n',
  '.cw/d1/manifest.yaml': 'kind: code-workspace\ncode: ./.cw/d2\n',
  '.cw/d2/manifest.yaml': 'kind: code-workspace\ncode: ./.cw/d3\n',
  '.cw/d3/manifest.yaml': 'kind: code-workspace\ncode: ./.cw/d4\n',
  '.cw/d4/manifest.yaml': 'kind: code-workspace\ncode: ./.cw/d5\n',
  '.cw/d5/manifest.yaml': 'kind: code-workspace\ncode: ./.cw/d6\n',
  '.cw/d6/manifest.yaml': 'kind: code-workspace\ncode: { sources: [ { inline: { path: a, content: a } } ] }\n',
  '.cw/tool/manifest.yaml': 'kind: tool\nname: x\n',
  '.cw/bad/manifest.yaml': 'kind: code-workspace\ncode: { sources: [ { inline: { path: 1 } } ] }\n',
  '.cw/linked/manifest.yaml': { symlink: '../../../../../etc/hostname' },
};

const unsafe = (reason = 'unsafe-path'): Expectation => ({ error: SourceResolutionError, reason });
const invalid: Expectation = { error: ManifestValidationError };

const badInputs: [string, unknown, Expectation][] = [
  ['an absolute inline path', { sources: [{ inline: { path: '/etc/x', content: '' } }] }, unsafe()],
  ['a ../ inline path', { sources: [{ inline: { path: '../x', content: '' } }] }, unsafe()],
  ['a/../../x', { sources: [{ inline: { path: 'a/../../x', content: '' } }] }, unsafe()],
  ['////etc', { sources: [{ inline: { path: '////etc', content: '' } }] }, unsafe()],
  ['C:\\x', { sources: [{ inline: { path: 'C:\\x', content: '' } }] }, unsafe()],
  ['c:foo', { sources: [{ inline: { path: 'c:foo', content: '' } }] }, unsafe()],
  ['\\\\srv\\share', { sources: [{ inline: { path: '\\\\srv\\share', content: '' } }] }, unsafe()],
  ['..\\..\\x', { sources: [{ inline: { path: '..\\..\\x', content: '' } }] }, unsafe()],
  ['NUL in a path', { sources: [{ inline: { path: 'a\0b', content: '' } }] }, unsafe()],
  ['NUL in inline content', { sources: [{ inline: { path: 'a', content: 'x\0y' } }] }, unsafe('nul-in-content')],
  ['an empty inline path', { sources: [{ inline: { path: '', content: '' } }] }, invalid],
  ['"." as an inline path', { sources: [{ inline: { path: '.', content: '' } }] }, unsafe()],
  ['a name over 255 bytes', { sources: [{ inline: { path: `${'n'.repeat(256)}.ts`, content: '' } }] }, unsafe()],
  ['a 10,000-deep path', { sources: [{ inline: { path: `${'a/'.repeat(10_000)}f`, content: '' } }] }, unsafe()],
  ['%2F.. in a path', { sources: [{ inline: { path: 'a%2F..%2F..%2Fx', content: '' } }] }, unsafe()],
  ['traversal in local.as', { sources: [{ local: { path: 'tool.ts', as: '../tool.ts' } }] }, unsafe()],
  ['an absolute local.path', { sources: [{ local: '/etc/passwd' }] }, unsafe()],
  ['a local.path with ..', { sources: [{ local: 'lib/../../x' }] }, unsafe()],
  ['traversal in github.path', { sources: [{ github: { repo: 'o/r', ref: SHELL_SHA, path: '../x' } }] }, unsafe()],
  ['traversal in github.as', { sources: [{ github: { repo: 'o/r', ref: SHELL_SHA, as: '/x' } }] }, unsafe()],
  ['repo ../..', { sources: [{ github: { repo: '../..', ref: SHELL_SHA } }] }, unsafe('invalid-repo')],
  ['repo a/b?x', { sources: [{ github: { repo: 'a/b?x', ref: SHELL_SHA } }] }, unsafe('invalid-repo')],
  ['repo with three parts', { sources: [{ github: { repo: 'a/b/c', ref: SHELL_SHA } }] }, invalid],
  ['ref ../../x', { sources: [{ github: { repo: 'o/r', ref: '../../x' } }] }, unsafe('ref-unresolved')],
  ['ref %2F..', { sources: [{ github: { repo: 'o/r', ref: '%2F..' } }] }, unsafe('ref-unresolved')],
  // A short hex name is a ref like any other (it may be a branch): only the connector can
  // resolve it, so without one it is refused for that (test/conformance/github-refs-and-cache).
  [
    'a short hex ref without a connector',
    { sources: [{ github: { repo: 'o/r', ref: '4f3a2b1c' } }] },
    unsafe('no-github-connector'),
  ],
  [
    'an upper-case SHA',
    { sources: [{ github: { repo: 'o/r', ref: SHELL_SHA.toUpperCase() } }] },
    unsafe('ref-unresolved'),
  ],
  ['an absolute code shorthand', '/abs/workspace', invalid],
  ['a code shorthand with ..', '../outside', unsafe()],
  ['a ref cycle A → A', './.cw/self', unsafe('cycle')],
  ['a ref cycle A → B → A', './.cw/a', unsafe('cycle')],
  ['a ref chain 6 deep', './.cw/d1', unsafe('too-deep')],
  ['a ref to something that is not a code-workspace', './.cw/tool', unsafe('not-a-code-workspace')],
  ['a ref to a folder without a manifest', './lib', unsafe('not-found')],
  ['a ref whose manifest fails the schema', './.cw/bad', unsafe('invalid-manifest')],
  ['a ref whose manifest is a link out of the workspace', './.cw/linked', unsafe('unsafe-link')],
  ['a workspace link that escapes', { sources: [{ local: 'link-out' }] }, unsafe('unsafe-link')],
  ['a looping workspace link', { sources: [{ local: 'loop-a' }] }, unsafe('unsafe-link')],
  ['a dangling workspace link', { sources: [{ local: 'dangling' }] }, unsafe('unsafe-link')],
  ['an escaping link inside a bundled folder', { sources: [{ local: 'links/' }] }, unsafe('unsafe-link')],
  ['a missing local file', { sources: [{ local: 'missing.ts' }] }, unsafe('not-found')],
  ['a file with a trailing /', { sources: [{ local: 'tool.ts/' }] }, unsafe('not-found')],
  [
    'a file in one source and a folder in another',
    { sources: [{ inline: { path: 'lib', content: 'x' } }, { local: 'lib/' }] },
    unsafe('file-directory-clash'),
  ],
  ['case twins', { sources: [{ local: 'lib/' }, { local: 'Lib/' }] }, unsafe('case-twin')],
  [
    'NFC/NFD twins that differ by case too',
    {
      sources: [
        { inline: { path: 'Caf\u00e9.ts', content: '1' } },
        { inline: { path: 'cafe\u0301.ts', content: '2' } },
      ],
    },
    unsafe('case-twin'),
  ],
  [
    'a github source without a connector',
    { sources: [{ github: { repo: 'o/r', ref: SHELL_SHA } }] },
    unsafe('no-github-connector'),
  ],
  ['a source with two variants', { sources: [{ inline: { path: 'a', content: '' }, local: 'tool.ts' }] }, invalid],
  ['a source with none', { sources: [{}] }, invalid],
  ['an empty source list', { sources: [] }, invalid],
  ['a bundle over the byte cap', { sources: [{ local: 'big.bin' }] }, { error: BundleSizeError }],
];

describe('defineCode refuses bad manifests before any runner starts', () => {
  it.each(badInputs)('refuses %s with a typed error and writes nothing', async (_name, code, expected) => {
    const workspaceRoot = await makeWorkspace(workspaceSpec);
    const before = await snapshot(workspaceRoot);
    const error = await defineCode({ workspaceRoot, code: code as Code, limits: { maxBytes: 1024 } } as never).catch(
      (e: unknown) => e,
    );
    expect(error, String(error)).toBeInstanceOf(expected.error);
    if (expected.reason) expect((error as SourceResolutionError).reason, String(error)).toBe(expected.reason);
    expect(await snapshot(workspaceRoot)).toEqual(before);
  });

  it('names the offending source: its index and the ref chain that led to it', async () => {
    const workspaceRoot = await makeWorkspace({
      '.cw/x/manifest.yaml': 'kind: code-workspace\ncode: { sources: [ { local: missing.ts } ] }\n',
    });
    const error = (await defineCode({
      workspaceRoot,
      code: { sources: [{ inline: { path: 'a', content: '' } }, { ref: './.cw/x' }] },
    }).catch((e: unknown) => e)) as SourceResolutionError;
    expect(error.source).toBe('sources[1] → ref ".cw/x" → sources[0]');
    expect(error.declaration).toEqual({ local: 'missing.ts' });
    expect(error.code).toBe('AIP26_SOURCE_UNRESOLVED');
  });

  it('refuses a bundle over the file-count cap while reading', async () => {
    const workspaceRoot = await makeWorkspace(
      Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`many/f${i}`, 'x'])),
    );
    const error = await defineCode({
      workspaceRoot,
      code: { sources: [{ local: 'many/' }] },
      limits: { maxFiles: 5 },
    } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BundleSizeError);
    expect(error).toMatchObject({ limit: 'files', max: 5 });
  });
});
