import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreRootError, defaultCacheRoot, openContentStore } from '@agentproto/content-cache';
import { tempDir } from './support/temp.js';

describe('store root', () => {
  it('defaults to $XDG_CACHE_HOME/agentproto', () => {
    expect(defaultCacheRoot({ XDG_CACHE_HOME: '/var/cache/me' }, '/home/me')).toBe('/var/cache/me/agentproto');
  });

  it('falls back to ~/.cache/agentproto, ignoring a relative XDG_CACHE_HOME', () => {
    expect(defaultCacheRoot({}, '/home/me')).toBe('/home/me/.cache/agentproto');
    expect(defaultCacheRoot({ XDG_CACHE_HOME: 'relative/cache' }, '/home/me')).toBe('/home/me/.cache/agentproto');
  });

  it('opens the default root when none is given', async () => {
    const home = await tempDir();
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = home;
    try {
      const store = await openContentStore();
      expect(store.root).toBe(join(home, 'agentproto'));
    } finally {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    }
  });

  const refused: [string, (dir: string) => Promise<{ root: string; workspace?: string }>, string][] = [
    ['a relative root', async () => ({ root: 'cache' }), 'CACHE_ROOT_INVALID'],
    ['a root with NUL', async () => ({ root: '/tmp/a\0b' }), 'CACHE_ROOT_INVALID'],
    [
      'a root inside the workspace',
      async (dir) => ({ root: join(dir, 'ws/.cache/agentproto'), workspace: join(dir, 'ws') }),
      'CACHE_ROOT_IN_WORKSPACE',
    ],
    [
      'the workspace itself',
      async (dir) => ({ root: join(dir, 'ws'), workspace: join(dir, 'ws') }),
      'CACHE_ROOT_IN_WORKSPACE',
    ],
    [
      'a root reached through a link into the workspace',
      async (dir) => {
        await mkdir(join(dir, 'ws/inner'), { recursive: true });
        await symlink(join(dir, 'ws/inner'), join(dir, 'alias'));
        return { root: join(dir, 'alias/cache'), workspace: join(dir, 'ws') };
      },
      'CACHE_ROOT_IN_WORKSPACE',
    ],
    [
      'a root below a file',
      async (dir) => {
        await writeFile(join(dir, 'file'), 'x');
        return { root: join(dir, 'file/cache') };
      },
      'CACHE_ROOT_UNUSABLE',
    ],
  ];
  it.each(refused)('refuses %s', async (_name, make, code) => {
    const dir = await tempDir();
    const options = await make(dir);
    const error = await openContentStore(options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreRootError);
    expect((error as StoreRootError).code).toBe(code);
  });

  it('accepts a root beside the workspace', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'ws'));
    const store = await openContentStore({ root: join(dir, 'ws-cache'), workspace: join(dir, 'ws') });
    expect(store.root).toBe(join(dir, 'ws-cache'));
  });
});
