import type { Code } from '@agentproto/aip-26';
import { describe, expect, it } from 'vitest';
import { checkToolManifest } from '../src/index.js';
import { pointerOf, relabel } from '../src/problems.js';

const good = { name: 'hello', code: { sources: [{ inline: { path: 'tool.js', content: '' } }] }, run: 'tool.js' };

describe('checkToolManifest (before any I/O)', () => {
  it('accepts a manifest with a name, a code block and a run block', () => {
    expect(checkToolManifest(good)).toEqual({ ok: true, manifest: good });
  });

  it.each([
    ['not an object', [], [['', 'TOOL_MANIFEST_INVALID']]],
    ['a name with capitals', { ...good, name: 'Hello' }, [['/name', 'TOOL_NAME_INVALID']]],
    ['a name with a slash', { ...good, name: 'a/b' }, [['/name', 'TOOL_NAME_INVALID']]],
    ['no code block', { name: 'x', run: 'tool.js' }, [['/code', 'AIP26_MANIFEST_INVALID']]],
    ['no run block', { name: 'x', code: good.code }, [['/run', 'AIP26_MANIFEST_INVALID']]],
    [
      'an inline source without content',
      { ...good, code: { sources: [{ inline: { path: 'a' } }] } },
      [['/code/sources/0/inline', 'AIP26_MANIFEST_INVALID']],
    ],
    ['a run file of unknown extension', { ...good, run: 'tool.exe' }, [['/run', 'AIP26_RUN_INVALID']]],
    ['a run file outside the bundle', { ...good, run: { file: '../tool.js' } }, [['/run', 'AIP26_UNSAFE_PATH']]],
    ['a runner that is not an object', { ...good, runner: 'node' }, [['/runner', 'TOOL_MANIFEST_INVALID']]],
    [
      'everything at once',
      { name: '', code: 5, run: 5 },
      [
        ['/name', 'TOOL_NAME_INVALID'],
        ['/code', 'AIP26_MANIFEST_INVALID'],
        ['/run', 'AIP26_MANIFEST_INVALID'],
      ],
    ],
  ])('refuses %s, with a pointer per problem', (_case, manifest, expected) => {
    const result = checkToolManifest(manifest);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => [p.pointer, p.code])).toEqual(expected);
  });
});

describe('source labels', () => {
  it.each<[string, Code, string]>([
    ['sources[3]', { sources: [] }, '/code/sources/3'],
    ['sources[1] → ref "lib" → sources[0]', { sources: [] }, '/code/sources/1'],
    ['sources[0] → ref "lib" → sources[2]', './lib', '/code'],
  ])('%s points at the declaration in the manifest', (label, code, pointer) => {
    expect(pointerOf(label, code)).toBe(pointer);
  });

  it('relabels a source scanned alone as the source it is in the manifest, ref chain kept', () => {
    const problem = {
      code: 'AIP26_SOURCE_UNRESOLVED',
      pointer: '/code/sources/0',
      source: 'sources[0] → ref "lib" → sources[0]',
      message: 'sources[0] → ref "lib" → sources[0] {}: gone',
    };
    expect(relabel(problem, 4)).toEqual({
      code: 'AIP26_SOURCE_UNRESOLVED',
      pointer: '/code/sources/4',
      source: 'sources[4] → ref "lib" → sources[0]',
      message: 'sources[4] → ref "lib" → sources[0] {}: gone',
    });
  });
});
