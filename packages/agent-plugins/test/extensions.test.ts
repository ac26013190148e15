import { describe, expect, it } from 'vitest';
import type { PackageFile } from '../src/bundle/include.js';
import {
  EXTENSION_FINDING_CODES,
  KNOWN_NAMESPACES,
  extensionData,
  extensionFiles,
  knownNamespace,
  matchLayout,
  packagePathProblem,
  splitExtensions,
} from '../src/extensions/index.js';
import { RULES } from '../src/findings.js';

const file = (text: string, mode: 0o644 | 0o755 = 0o644): PackageFile => ({
  bytes: new TextEncoder().encode(text),
  mode,
});
const text = (bytes: Uint8Array | undefined): string => new TextDecoder().decode(bytes);
const json = (value: unknown): string => JSON.stringify(value, null, 2);
const codes = (findings: { code: string; path: string }[]): [string, string][] => findings.map((f) => [f.code, f.path]);

describe('extension finding codes', () => {
  it('give every code a rule, a severity and a text, under the extension prefix', () => {
    for (const [code, info] of Object.entries(EXTENSION_FINDING_CODES)) {
      expect(code.startsWith('extension.')).toBe(true);
      expect(RULES).toContain(info.rule);
      expect(info.text.length).toBeGreaterThan(20);
    }
  });

  it('report an invalid namespace under AR9O0 and unpackable data under AR9O4', () => {
    expect(EXTENSION_FINDING_CODES['extension.namespace-invalid']).toMatchObject({ rule: 'AR9O0', severity: 'error' });
    expect(EXTENSION_FINDING_CODES['extension.data-not-object']).toMatchObject({ rule: 'AR9O4' });
    expect(EXTENSION_FINDING_CODES['extension.path-invalid']).toMatchObject({ rule: 'AR9O5', severity: 'error' });
  });
});

describe('namespace folders', () => {
  it.each([
    ['Com.Example', 'is not a reverse-domain namespace'],
    ['example', 'is not a reverse-domain namespace'],
    ['1com.example', 'is not a reverse-domain namespace'],
    ['com..example', 'is not a reverse-domain namespace'],
    ['com.-example', 'is not a reverse-domain namespace'],
    ['com_example.x', 'is not a reverse-domain namespace'],
    ['plugin.json', 'names a file at the package root'],
    ['mcp.json', 'names a file at the package root'],
    ['package.json', 'names a file at the package root'],
  ])('refuse the folder %j as a whole: it %s', (namespace, problem) => {
    const { files, findings } = extensionFiles({
      [namespace]: { 'a.md': file('a') },
      'com.example.tool': { 'x.txt': file('x') },
    });
    expect([...files.keys()]).toEqual(['com.example.tool/x.txt']);
    expect(findings).toEqual([
      expect.objectContaining({
        code: 'extension.namespace-invalid',
        rule: 'AR9O0',
        severity: 'error',
        path: `${namespace}/`,
        message: `the namespace folder ${problem}; its files were not packaged`,
      }),
    ]);
  });

  it.each([
    ['', 'is empty'],
    ['/etc/passwd', 'is absolute'],
    ['../escape.md', 'contains a ".." segment'],
    ['agents/../../x.md', 'contains a ".." segment'],
    ['./agents/x.md', 'contains a "." segment'],
    ['agents//x.md', 'has an empty segment'],
    ['agents/', 'has an empty segment'],
    ['agents\\x.md', 'contains a backslash (use "/")'],
    ['C:/x.md', 'starts with a drive letter'],
    ['a\0b', 'contains NUL'],
  ])('refuse the file path %j: it %s', (path, problem) => {
    expect(packagePathProblem(path)).toBe(problem);
    const { files, findings } = extensionFiles({ 'com.example.tool': { [path]: file('x'), 'ok.txt': file('ok') } });
    expect([...files.keys()]).toEqual(['com.example.tool/ok.txt']);
    expect(codes(findings)).toEqual([['extension.path-invalid', 'com.example.tool/']]);
  });

  it.each([
    ['com.anthropic.claude-code', 'agents/review.md'],
    ['com.anthropic.claude-code', 'commands/ship.md'],
    ['com.anthropic.claude-code', 'hooks/hooks.json'],
    ['com.github.copilot', 'agents/review.agent.md'],
    ['io.github.goldziher.ai-rulez', 'rules/style.md'],
    ['io.github.goldziher.ai-rulez', 'context/architecture.md'],
  ])('package %s/%s, a file of the known layout, without a finding', (namespace, path) => {
    const { files, findings } = extensionFiles({ [namespace]: { [path]: file('body', 0o755) } });
    expect([...files.keys()]).toEqual([`${namespace}/${path}`]);
    expect(files.get(`${namespace}/${path}`)?.mode).toBe(0o755);
    expect(findings).toEqual([]);
  });

  it.each([
    ['com.anthropic.claude-code', 'agents/nested/review.md'],
    ['com.anthropic.claude-code', 'agents/.hidden.md'],
    ['com.anthropic.claude-code', 'agents/.md'],
    ['com.anthropic.claude-code', 'hooks/other.json'],
    ['com.anthropic.claude-code', 'README.md'],
    ['com.github.copilot', 'agents/review.md'],
    ['com.openai', 'interface.json'],
    ['io.github.goldziher.ai-rulez', 'rules/style.txt'],
  ])('carry %s/%s, outside the known layout, as is with a warning', (namespace, path) => {
    const { files, findings } = extensionFiles({ [namespace]: { [path]: file('body') } });
    expect(text(files.get(`${namespace}/${path}`)?.bytes)).toBe('body');
    expect(findings).toEqual([
      expect.objectContaining({
        code: 'extension.layout-unknown',
        rule: 'AR9O0',
        severity: 'warning',
        path: `${namespace}/${path}`,
      }),
    ]);
  });

  it('carry an unknown namespace folder through untouched, whatever its layout', () => {
    const tree = {
      'hooks/pre.sh': file('#!/bin/sh', 0o755),
      'deep/a/b/c.bin': file('\u0000\u0001'),
      'x.md': file('x'),
    };
    const { files, findings } = extensionFiles({ 'com.example.client': tree });
    expect(findings).toEqual([]);
    expect([...files]).toEqual([
      ['com.example.client/deep/a/b/c.bin', tree['deep/a/b/c.bin']],
      ['com.example.client/hooks/pre.sh', tree['hooks/pre.sh']],
      ['com.example.client/x.md', tree['x.md']],
    ]);
  });

  it('list files in byte order of path, whatever order namespaces and files come in', () => {
    const a = extensionFiles({
      'io.github.goldziher.ai-rulez': { 'rules/b.md': file('b'), 'rules/a.md': file('a') },
      'com.github.copilot': { 'agents/z.agent.md': file('z') },
    });
    const b = extensionFiles({
      'com.github.copilot': { 'agents/z.agent.md': file('z') },
      'io.github.goldziher.ai-rulez': { 'rules/a.md': file('a'), 'rules/b.md': file('b') },
    });
    expect([...a.files.keys()]).toEqual([
      'com.github.copilot/agents/z.agent.md',
      'io.github.goldziher.ai-rulez/rules/a.md',
      'io.github.goldziher.ai-rulez/rules/b.md',
    ]);
    expect([...b.files.keys()]).toEqual([...a.files.keys()]);
  });
});

describe('known namespace layouts', () => {
  it.each([
    ['com.anthropic.claude-code', 'agents/review.md', 'agent', 'review'],
    ['com.anthropic.claude-code', 'agents/x.agent.md', 'agent', 'x.agent'],
    ['com.anthropic.claude-code', 'commands/ship.md', 'command', 'ship'],
    ['com.anthropic.claude-code', 'hooks/hooks.json', 'hooks', undefined],
    ['com.github.copilot', 'agents/x.agent.md', 'agent', 'x'],
    ['io.github.goldziher.ai-rulez', 'rules/style.md', 'rule', 'style'],
    ['io.github.goldziher.ai-rulez', 'context/arch.md', 'context', 'arch'],
  ])('read %s/%s as the %s %j', (namespace, path, kind, name) => {
    const known = knownNamespace(namespace);
    expect(known).toBeDefined();
    const match = matchLayout(known!, path);
    expect(match?.layout.kind).toBe(kind);
    expect(match?.name).toBe(name);
  });

  it('know exactly the four namespaces of the seed', () => {
    expect(Object.keys(KNOWN_NAMESPACES).sort()).toEqual([
      'com.anthropic.claude-code',
      'com.github.copilot',
      'com.openai',
      'io.github.goldziher.ai-rulez',
    ]);
    expect(knownNamespace('com.example.client')).toBeUndefined();
    expect(knownNamespace('constructor')).toBeUndefined();
  });
});

describe('manifest extension data', () => {
  it('write com.openai with its keys sorted at every depth, arrays in their order', () => {
    const { extensions, findings } = extensionData({
      'com.openai': {
        interface: {
          shortDescription: 's',
          displayName: 'D',
          capabilities: ['Write', 'Read'],
          brand: { z: 1, a: { y: 2, b: 3 } },
        },
      },
    });
    expect(findings).toEqual([]);
    expect(json(extensions)).toBe(
      json({
        'com.openai': {
          interface: {
            brand: { a: { b: 3, y: 2 }, z: 1 },
            capabilities: ['Write', 'Read'],
            displayName: 'D',
            shortDescription: 's',
          },
        },
      }),
    );
  });

  it('carry unknown and folder-only namespaces untouched, key order and all', () => {
    const value = { zeta: 1, alpha: { y: true, b: null } };
    const { extensions, findings } = extensionData({
      'com.example.client': value,
      'com.anthropic.claude-code': { z: 1, a: 2 },
    });
    expect(findings).toEqual([]);
    expect(extensions?.['com.example.client']).toBe(value);
    expect(json(extensions)).toBe(
      json({
        'com.anthropic.claude-code': { z: 1, a: 2 },
        'com.example.client': { zeta: 1, alpha: { y: true, b: null } },
      }),
    );
  });

  it('write namespaces in byte order, whatever order they come in', () => {
    const a = extensionData({
      'io.github.x': {},
      'com.openai': { interface: { b: 1, a: 2 } },
      'com.example': { k: 1 },
    });
    const b = extensionData({
      'com.example': { k: 1 },
      'com.openai': { interface: { a: 2, b: 1 } },
      'io.github.x': {},
    });
    expect(Object.keys(a.extensions ?? {})).toEqual(['com.example', 'com.openai', 'io.github.x']);
    expect(json(a.extensions)).toBe(json(b.extensions));
  });

  it.each([
    ['Com.Example', { a: 1 }, 'extension.namespace-invalid', 'plugin.json#/extensions/Com.Example'],
    ['a/b.c', { a: 1 }, 'extension.namespace-invalid', 'plugin.json#/extensions/a~1b.c'],
    ['com.example', 'text', 'extension.data-not-object', 'plugin.json#/extensions/com.example'],
    ['com.example', [1, 2], 'extension.data-not-object', 'plugin.json#/extensions/com.example'],
    ['com.example', null, 'extension.data-not-object', 'plugin.json#/extensions/com.example'],
    ['com.example', { when: new Date(0) }, 'extension.data-not-json', 'plugin.json#/extensions/com.example/when'],
    ['com.example', { list: [1, Number.NaN] }, 'extension.data-not-json', 'plugin.json#/extensions/com.example/list/1'],
    ['com.example', { gone: undefined }, 'extension.data-not-json', 'plugin.json#/extensions/com.example/gone'],
  ])('leave out the namespace %j holding %j (%s)', (namespace, value, code, path) => {
    const { extensions, findings } = extensionData({ [namespace]: value, 'com.keep.me': { k: 1 } });
    expect(Object.keys(extensions ?? {})).toEqual(['com.keep.me']);
    expect(codes(findings)).toEqual([[code, path]]);
  });

  it('leave out a com.openai interface that is not an object, and keep the rest of the namespace', () => {
    const { extensions, findings } = extensionData({ 'com.openai': { interface: 'x', other: { b: 1, a: 1 } } });
    expect(json(extensions)).toBe(json({ 'com.openai': { other: { a: 1, b: 1 } } }));
    expect(codes(findings)).toEqual([
      ['extension.interface-not-object', 'plugin.json#/extensions/com.openai/interface'],
    ]);
  });

  it('give no extensions object when nothing remains', () => {
    expect(extensionData({}).extensions).toBeUndefined();
    expect(extensionData({ bad: {} }).extensions).toBeUndefined();
  });

  it('keep a __proto__ key as data instead of changing the prototype', () => {
    const value = JSON.parse('{"interface": {"__proto__": {"x": 1}, "a": 1}}') as Record<string, unknown>;
    const { extensions } = extensionData({ 'com.openai': value });
    expect(JSON.stringify(extensions)).toBe('{"com.openai":{"interface":{"__proto__":{"x":1},"a":1}}}');
  });
});

describe('import split', () => {
  const pkg = new Map<string, PackageFile>([
    ['plugin.json', file('{}')],
    ['skills/review/SKILL.md', file('---')],
    ['scripts/run.sh', file('#!/bin/sh', 0o755)],
    ['com.anthropic.claude-code/agents/review.md', file('claude agent')],
    ['com.anthropic.claude-code/commands/ship.md', file('command')],
    ['com.anthropic.claude-code/hooks/hooks.json', file('{}')],
    ['com.anthropic.claude-code/notes.txt', file('notes')],
    ['com.github.copilot/agents/review.agent.md', file('copilot agent')],
    ['com.github.copilot/agents/triage.agent.md', file('triage')],
    ['io.github.goldziher.ai-rulez/rules/style.md', file('rule')],
    ['io.github.goldziher.ai-rulez/context/arch.md', file('context')],
    ['com.example.client/hooks/pre.sh', file('x')],
    ['com.example.client/data.json', file('{}')],
    ['Not.A.Namespace/file.md', file('x')],
  ]);

  it('turn Claude Code, Copilot and ai-rulez content into agents, commands, rules and context', () => {
    const { imported } = splitExtensions(pkg);
    expect(imported.map((i) => [i.kind, i.name, i.path])).toEqual([
      ['agent', 'review', 'com.anthropic.claude-code/agents/review.md'],
      ['command', 'ship', 'com.anthropic.claude-code/commands/ship.md'],
      ['agent', 'triage', 'com.github.copilot/agents/triage.agent.md'],
      ['context', 'arch', 'io.github.goldziher.ai-rulez/context/arch.md'],
      ['rule', 'style', 'io.github.goldziher.ai-rulez/rules/style.md'],
    ]);
    expect(text(imported[0]?.file.bytes)).toBe('claude agent');
  });

  it('report unknown namespaces once, hooks/hooks.json, files off the layout and duplicate names', () => {
    const { report, findings } = splitExtensions(pkg);
    expect(report).toEqual([
      { path: 'com.anthropic.claude-code/hooks/hooks.json', reason: 'no-equivalent' },
      { path: 'com.anthropic.claude-code/notes.txt', reason: 'not-in-layout' },
      { path: 'com.example.client/', reason: 'unknown-namespace' },
      { path: 'com.github.copilot/agents/review.agent.md', reason: 'duplicate' },
    ]);
    expect(findings).toEqual([]);
  });

  it('group namespace folders and leave every other package file in rest', () => {
    const { namespaces, rest } = splitExtensions(pkg);
    expect([...namespaces.keys()]).toEqual([
      'com.anthropic.claude-code',
      'com.example.client',
      'com.github.copilot',
      'io.github.goldziher.ai-rulez',
    ]);
    expect([...(namespaces.get('com.example.client')?.keys() ?? [])]).toEqual(['data.json', 'hooks/pre.sh']);
    expect([...rest.keys()]).toEqual([
      'Not.A.Namespace/file.md',
      'plugin.json',
      'scripts/run.sh',
      'skills/review/SKILL.md',
    ]);
  });

  it('read the Codex interface block and report data of unknown namespaces and unmapped keys', () => {
    const { interface: codex, report } = splitExtensions(new Map(), {
      'com.openai': { interface: { displayName: 'D' }, extra: 1 },
      'com.example.client': { a: 1 },
      'com.anthropic.claude-code': { setting: true },
    });
    expect(codex).toEqual({ displayName: 'D' });
    expect(report).toEqual([
      { path: 'plugin.json#/extensions/com.anthropic.claude-code/setting', reason: 'no-equivalent' },
      { path: 'plugin.json#/extensions/com.example.client', reason: 'unknown-namespace' },
      { path: 'plugin.json#/extensions/com.openai/extra', reason: 'no-equivalent' },
    ]);
  });

  it('refuse a namespace folder path that could escape the root', () => {
    const { namespaces, findings } = splitExtensions(new Map([['com.example.client/../plugin.json', file('x')]]));
    expect(namespaces.size).toBe(0);
    expect(codes(findings)).toEqual([['extension.path-invalid', 'com.example.client/']]);
  });

  it('give the files written by extensionFiles back as the same namespace folders', () => {
    const supplied = {
      'com.github.copilot': { 'agents/a.agent.md': file('a') },
      'com.example.client': { 'x/y.json': file('{}') },
    };
    const { files } = extensionFiles(supplied);
    const { namespaces } = splitExtensions(files);
    expect(Object.fromEntries([...namespaces].map(([ns, folder]) => [ns, Object.fromEntries(folder)]))).toEqual(
      supplied,
    );
  });

  it('split identically whatever order the package files come in', () => {
    const reversed = new Map([...pkg].reverse());
    expect(splitExtensions(reversed)).toEqual(splitExtensions(pkg));
  });
});
