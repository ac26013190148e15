import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRegistry, defaultRegistry, gitProvider, loadRegistry, localProvider } from '@agentproto/skill-providers';
import { ScriptedProvider } from './support/scripted-provider.js';
import { tempDir } from './support/temp.js';

describe('the provider registry', () => {
  it('finds providers by id and fails on an unknown one, listing the known ids', () => {
    const registry = createRegistry([gitProvider(), localProvider()]);
    expect(registry.get('git').id).toBe('git');
    expect(registry.ids()).toEqual(['git', 'local']);
    expect(() => registry.get('svn')).toThrow(
      expect.objectContaining({ code: 'SKILL_PROVIDER_UNKNOWN', known: ['git', 'local'] }),
    );
    expect(() => registry.get('svn')).toThrow('known providers: git, local');
  });

  it('holds only the git provider by default', () => {
    expect(defaultRegistry().ids()).toEqual(['git']);
  });

  it('refuses two providers with one id, and objects that are not providers', () => {
    expect(() => createRegistry([gitProvider(), gitProvider()])).toThrow(
      expect.objectContaining({ code: 'SKILL_PROVIDER_INVALID' }),
    );
    expect(() => createRegistry([{ id: 'x', validate() {} } as never])).toThrow('`egressHosts` is not a function');
    expect(() => createRegistry([{ ...new ScriptedProvider({}), id: 'Bad Id' } as never])).toThrow(
      expect.objectContaining({ code: 'SKILL_PROVIDER_INVALID' }),
    );
  });

  it('loads providers from deployment-owned packages named in the host configuration', async () => {
    const dir = await tempDir();
    const module = join(dir, 'acme-skills.mjs');
    await writeFile(
      module,
      `export const providers = [{ id: 'acme', validate() {}, egressHosts() { return ['skills.acme.test']; }, async resolve() { return { version: '1', contentId: 'c' }; }, async fetch() {} }];\n`,
    );
    const registry = await loadRegistry({ providers: [gitProvider()], packages: [pathToFileURL(module).href] });
    expect(registry.ids()).toEqual(['acme', 'git']);
    expect(registry.get('acme').egressHosts({} as never)).toEqual(['skills.acme.test']);
  });

  it('names a package that cannot be loaded or exports no providers', async () => {
    const dir = await tempDir();
    const empty = join(dir, 'empty.mjs');
    await writeFile(empty, 'export const nothing = 1;\n');
    await expect(loadRegistry({ packages: [pathToFileURL(empty).href] })).rejects.toThrow(
      'exports no `providers` array',
    );
    await expect(loadRegistry({ packages: ['@acme/not-installed-skills'] })).rejects.toMatchObject({
      code: 'SKILL_PROVIDER_INVALID',
      provider: '@acme/not-installed-skills',
    });
  });

  it("finds packages by name in the node_modules of the host's folder (or above), ESM-only and dual builds alike", async () => {
    const project = await tempDir();
    const provider = (id: string) =>
      `{ id: '${id}', validate() {}, egressHosts() { return []; }, async resolve() { return { version: '1', contentId: 'c' }; }, async fetch() {} }`;
    const install = async (name: string, manifest: object, files: Record<string, string>) => {
      const root = join(project, 'node_modules', name);
      await mkdir(root, { recursive: true });
      await writeFile(join(root, 'package.json'), JSON.stringify({ name, version: '1.0.0', ...manifest }));
      for (const [file, text] of Object.entries(files)) await writeFile(join(root, file), text);
    };
    // ESM only: `exports` has no `require` entry, so require's resolver refuses it.
    await install(
      '@acme/esm-skills',
      { type: 'module', exports: { '.': { import: './index.js' } } },
      { 'index.js': `export const providers = [${provider('esm')}];\n` },
    );
    // Both builds: found through `require`.
    await install(
      '@acme/dual-skills',
      { exports: { '.': { import: './index.mjs', require: './index.cjs' } } },
      {
        'index.mjs': `export const providers = [${provider('dual')}];\n`,
        'index.cjs': `exports.providers = [${provider('dual')}];\n`,
      },
    );
    const nested = join(project, 'config', 'host');
    await mkdir(nested, { recursive: true });
    const registry = await loadRegistry({ packages: ['@acme/esm-skills', '@acme/dual-skills'], from: nested });
    expect(registry.ids()).toEqual(['dual', 'esm']);
    // The working directory is the default: this repository's root has neither package.
    await expect(loadRegistry({ packages: ['@acme/esm-skills'] })).rejects.toMatchObject({
      code: 'SKILL_PROVIDER_INVALID',
      provider: '@acme/esm-skills',
    });
  });
});
