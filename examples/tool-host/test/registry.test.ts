import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RegistryCorruptError, type RegisteredTool, ToolRegistry } from '../src/index.js';
import { tempDir } from './support/temp.js';

const toolNamed = (name: string): RegisteredTool => ({
  name,
  manifest: { name, code: { sources: [] }, run: 'tool.js' },
  code: { sources: [] },
  workspaceRoot: '/srv/workspace',
  sources: [],
  registeredAt: '2025-01-01T00:00:00.000Z',
});

describe('the registry file', () => {
  it('keeps every tool when many are registered at once', async () => {
    const dir = await tempDir();
    const names = Array.from({ length: 20 }, (_, i) => `tool-${i}`);
    // Separate instances, as separate host processes would be.
    await Promise.all(names.map((name) => new ToolRegistry(join(dir, 'registry.json')).put(toolNamed(name))));
    const registry = new ToolRegistry(join(dir, 'registry.json'));
    expect((await registry.list()).map((tool) => tool.name).sort()).toEqual([...names].sort());
    // No temporary file or lock is left beside it.
    expect(await readdir(dir)).toEqual(['registry.json']);
  });

  it('replaces a tool registered again under the same name', async () => {
    const registry = new ToolRegistry(join(await tempDir(), 'registry.json'));
    await registry.put(toolNamed('a'));
    await registry.put({ ...toolNamed('a'), workspaceRoot: '/elsewhere' });
    expect(await registry.list()).toEqual([{ ...toolNamed('a'), workspaceRoot: '/elsewhere' }]);
    expect(JSON.parse(await readFile(registry.file, 'utf8')).format).toBe(1);
  });

  it('refuses a file it did not write rather than overwrite it', async () => {
    const file = join(await tempDir(), 'registry.json');
    await writeFile(file, '{"tools": []}');
    const registry = new ToolRegistry(file);
    await expect(registry.put(toolNamed('a'))).rejects.toBeInstanceOf(RegistryCorruptError);
    expect(await readFile(file, 'utf8')).toBe('{"tools": []}');
  });

  it('answers an unknown name, even an Object.prototype one, with undefined', async () => {
    const registry = new ToolRegistry(join(await tempDir(), 'registry.json'));
    await registry.put(toolNamed('a'));
    expect(await registry.get('constructor')).toBeUndefined();
    expect(await registry.get('b')).toBeUndefined();
  });
});
