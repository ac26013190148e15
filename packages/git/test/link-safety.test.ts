import { describe, expect, it } from 'vitest';
import { linkProblem } from '../src/link-safety.js';

describe('symlinks stay inside the fetched directory', () => {
  // [link path, target, other links of the directory, expected problem]
  it.each<[string, string, Record<string, string>, string | undefined]>([
    ['a', 'b', {}, undefined],
    ['a', './b', {}, undefined],
    ['a', '.', {}, undefined],
    ['a', 'dir/file', {}, undefined],
    ['dir/a', '../b', {}, undefined],
    ['dir/sub/a', '../../b', {}, undefined],
    ['dir/a', '../dir/./b', {}, undefined],
    ['a', 'missing/x', {}, undefined],
    ['a', 'dir//b', {}, undefined],
    ['a', 'l', { l: 'dir' }, undefined],
    ['a', 'l/x', { l: 'dir/sub' }, undefined],
    ['a', '', {}, 'the link is empty'],
    ['a', '/etc/passwd', {}, 'the link is absolute'],
    ['a', '..', {}, 'the link leads outside the directory'],
    ['a', '../x', {}, 'the link leads outside the directory'],
    ['dir/a', '../../x', {}, 'the link leads outside the directory'],
    // Leaving and coming back still reads the directory's parent on the way.
    ['a', '../out/a', {}, 'the link leads outside the directory'],
    ['a', 'dir/../../x', {}, 'the link leads outside the directory'],
    // Lexically inside, but `s` is `.`, so `s/..` is the parent: only following links shows it.
    ['a', 's/../x', { s: '.' }, 'the link leads outside the directory'],
    ['dir/a', 's/../../x', { 'dir/s': 'deep/er' }, undefined],
    ['dir/a', 's/../../../x', { 'dir/s': '.' }, 'the link leads outside the directory'],
    ['a', 'up/x', { up: '..' }, 'the link leads outside the directory'],
    ['a', 'abs/x', { abs: '/etc' }, 'the link goes through an absolute link'],
    ['a', 'loop', { loop: 'loop' }, 'the link is part of a loop'],
    ['a', 'p', { p: 'q', q: 'p' }, 'the link is part of a loop'],
  ])('%s -> %j with links %j: %s', (path, target, others, expected) => {
    const links = new Map([...Object.entries(others), [path, target]]);
    expect(linkProblem(path, target, links)).toBe(expected);
  });
});
