import { describe, expect, it } from 'vitest';
import {
  SIDECAR,
  contentHash,
  includeGlobProblem,
  rewriteSharedLinks,
  selectIncluded,
  shareResources,
  type PackageFile,
} from '../src/bundle/index.js';

const tree = [
  'scripts/mcp-launch.sh',
  'scripts/lib/util.sh',
  'scripts/.env.example',
  'docs/a.md',
  'docs/deep/b.md',
  'README.md',
  'plugin.json',
  'mcp.json',
  SIDECAR,
  'skills/review/SKILL.md',
  'skills/review/scripts/x.sh',
];

describe('include globs', () => {
  it.each([
    [['scripts/**'], ['scripts/.env.example', 'scripts/lib/util.sh', 'scripts/mcp-launch.sh']],
    [['scripts/*'], ['scripts/.env.example', 'scripts/mcp-launch.sh']],
    [['scripts/'], ['scripts/.env.example', 'scripts/lib/util.sh', 'scripts/mcp-launch.sh']],
    [['docs/?.md'], ['docs/a.md']],
    [['*.md'], ['README.md']],
    [['**/*.md'], ['README.md', 'docs/a.md', 'docs/deep/b.md']],
  ])('%j selects %j: ** crosses folders, * and ? do not, a trailing / takes everything below', (globs, expected) => {
    const { selected, findings } = selectIncluded(tree, globs);
    expect(selected).toEqual(expected);
    expect(findings).toEqual([]);
  });

  it('never selects the manifest, mcp.json, the skills tree or the sidecar, however broad the glob', () => {
    const { selected } = selectIncluded(tree, ['**', '*', 'skills/**', 'plugin.json']);
    expect(selected).not.toContain('plugin.json');
    expect(selected).not.toContain('mcp.json');
    expect(selected).not.toContain(SIDECAR);
    expect(selected.filter((path) => path.startsWith('skills/'))).toEqual([]);
    expect(selected).toContain('README.md');
  });

  it.each([
    ['/etc/passwd', 'is absolute'],
    ['\\\\server\\share', 'is absolute'],
    ['C:/x/**', 'starts with a drive letter'],
    ['c:x', 'starts with a drive letter'],
    ['../outside/**', 'contains a ".." segment'],
    ['scripts/../../x', 'contains a ".." segment'],
    ['scripts\\x', 'contains a backslash (use "/")'],
    ['', 'is empty'],
  ])('refuses %j: it %s', (glob, problem) => {
    expect(includeGlobProblem(glob)).toBe(problem);
    const { selected, findings } = selectIncluded(tree, [glob, 'README.md']);
    expect(selected).toEqual(['README.md']);
    expect(findings).toEqual([
      expect.objectContaining({
        code: 'bundle.glob-escapes',
        rule: 'AR9O5',
        severity: 'error',
        path: 'plugin#/include/0',
      }),
    ]);
  });

  it('reports a glob that matches nothing, and still applies the others', () => {
    const { selected, findings } = selectIncluded(tree, ['nothing/**', 'README.md']);
    expect(selected).toEqual(['README.md']);
    expect(findings.map((f) => [f.code, f.path])).toEqual([['bundle.glob-empty', 'plugin#/include/0']]);
  });

  it('returns the same selection whatever the order of files and globs', () => {
    const a = selectIncluded(tree, ['docs/**', 'scripts/*']).selected;
    const b = selectIncluded([...tree].reverse(), ['scripts/*', 'docs/**']).selected;
    expect(b).toEqual(a);
  });

  it('hashes content as sha256:<hex>', () => {
    expect(contentHash(Buffer.from('abc'))).toBe(
      'sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});

const file = (text: string, mode: 0o644 | 0o755 = 0o644): PackageFile => ({ bytes: Buffer.from(text), mode });

describe('shared resources', () => {
  it('copies the shared folder into every skill, keeping modes, and rewrites links that climbed out to it', () => {
    const skills = new Map([
      [
        'review',
        new Map([['SKILL.md', file('See [the guide](../../references/guide.md#use) and [x](../other/x.md).\n')]]),
      ],
      ['lint', new Map([['SKILL.md', file('No links.\n')]])],
    ]);
    const shared = new Map([
      ['guide.md', file('guide\n')],
      ['run.sh', file('#!/bin/sh\n', 0o755)],
    ]);
    const { skills: out, findings } = shareResources(skills, 'references', shared);
    expect(findings).toEqual([]);
    expect([...out.get('review')!.keys()].sort()).toEqual(['SKILL.md', 'references/guide.md', 'references/run.sh']);
    expect(out.get('lint')!.get('references/run.sh')!.mode).toBe(0o755);
    expect(Buffer.from(out.get('review')!.get('SKILL.md')!.bytes).toString()).toBe(
      'See [the guide](references/guide.md#use) and [x](../other/x.md).\n',
    );
    // Untouched bytes stay the very same bytes.
    expect(out.get('lint')!.get('SKILL.md')!.bytes).toBe(skills.get('lint')!.get('SKILL.md')!.bytes);
  });

  it('refuses to overwrite a file the skill already has: an error, and the skill keeps its own', () => {
    const own = file('mine\n');
    const skills = new Map([
      [
        'review',
        new Map([
          ['SKILL.md', file('x\n')],
          ['references/guide.md', own],
        ]),
      ],
    ]);
    const { skills: out, findings } = shareResources(skills, 'references', new Map([['guide.md', file('shared\n')]]));
    expect(out.get('review')!.get('references/guide.md')).toBe(own);
    expect(findings).toEqual([
      expect.objectContaining({
        code: 'bundle.shared-clash',
        rule: 'AR9O5',
        severity: 'error',
        path: 'skills/review/references/guide.md',
      }),
    ]);
  });

  it('leaves links that do not reach the shared folder as they are', () => {
    const text = '[a](./local.md) [b](../../templates/t.md) [c](https://example.com/x) [d](../../references)\n';
    expect(Buffer.from(rewriteSharedLinks(Buffer.from(text), 'references')).toString()).toBe(text);
  });
});
