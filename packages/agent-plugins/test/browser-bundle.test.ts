import { fileURLToPath } from 'node:url';
import { createContext, runInContext } from 'node:vm';
import { bundleForBrowser } from '@agentproto/testkit';
import { describe, expect, it } from 'vitest';
import { type ImportedPlugin, importPlugin, validatePlugin } from '../src/index.js';
import { folderTree, tarGzOf, zipOf } from './support/archives.js';

// Issue 17: "A browser export condition (ESM, web-standard APIs only: Uint8Array, TextDecoder,
// crypto.subtle), tree-shakeable. Schemas compiled ahead of time (Ajv standalone code), so the
// bundle needs no eval [...]. Size budget: [...] under 150 KB" gzipped.

const root = fileURLToPath(new URL('../../../', import.meta.url));
const golden = fileURLToPath(new URL('./golden/1.1.0/', import.meta.url));
const ENTRY = `export { validatePlugin, readZip, readTarGz, readUploadedFiles, explain } from '@agentproto/agent-plugins';`;
const SOURCES = { conditions: ['@agentproto/source'] };

describe('the browser bundle of validation', () => {
  it('bundles for a browser (no Node built-in anywhere in its graph), under 150 KB gzipped', async () => {
    const bundle = await bundleForBrowser(ENTRY, root, SOURCES);
    expect(bundle.gzipBytes).toBeLessThan(150 * 1024);
    // What does not exist in a browser, or a strict Content-Security-Policy forbids.
    const forbidden = [
      ...bundle.code.matchAll(/\bBuffer\.|\bprocess\.\w+\(|\brequire\(|\beval\(|new Function\b|\bFunction\(/g),
    ];
    expect(forbidden.map((match) => bundle.code.slice(match.index - 40, match.index + 40))).toEqual([]);
    expect([...bundle.inputs.keys()].filter((input) => /^(node:|ajv@)/.test(input))).toEqual([]);
  });

  it('the OCI, build, write and hashing code of the Node entry is not in it', async () => {
    const bundle = await bundleForBrowser(ENTRY, root, SOURCES);
    const nodeOnly =
      /src\/(oci|write|config)\/|src\/build\/(build|sidecar-render|source)\.ts|src\/bundle\/hash\.ts|src\/read\/node\.ts/;
    expect([...bundle.inputs.keys()].filter((input) => nodeOnly.test(input))).toEqual([]);
  });

  it('keeps only the members of fflate and minimatch the package calls (#libraries, browser condition)', async () => {
    const bundle = await bundleForBrowser(ENTRY, root, SOURCES);
    const here = fileURLToPath(new URL('../', import.meta.url));
    const bytesOf = (inputs: Map<string, number>, name: string) =>
      [...inputs].find(([input]) => input.startsWith(`${name}@`))?.[1] ?? 0;
    for (const [name, members] of [
      ['fflate', 'Gunzip, Inflate, inflateSync'],
      ['minimatch', 'escape, minimatch'],
    ] as const) {
      const alone = await bundleForBrowser(`export { ${members} } from '${name}';`, here);
      // The same members bundled alone, give or take the minifier's names; fflate whole is 6x that.
      expect({ name, inBundle: bytesOf(bundle.inputs, name) <= 1.2 * bytesOf(alone.inputs, name) }).toEqual({
        name,
        inBundle: true,
      });
      expect(bytesOf(alone.inputs, name)).toBeGreaterThan(0);
      if (name === 'fflate') {
        const whole = await bundleForBrowser(`export * from '${name}';`, here);
        expect(bytesOf(whole.inputs, name)).toBeGreaterThan(3 * bytesOf(alone.inputs, name));
      }
    }
  });

  it('runs with web globals alone and gives the verdicts, and the import, of the folder', async () => {
    const whole = `export * from '@agentproto/agent-plugins';`;
    const bundle = await bundleForBrowser(whole, root, { ...SOURCES, format: 'iife', globalName: 'agentPlugins' });
    // A realm with the web platform's globals a worker has, and none of Node's.
    const realm = createContext({
      ...{ TextEncoder, TextDecoder, atob, btoa, Blob, URL, console, queueMicrotask, structuredClone },
      ...{ setTimeout, clearTimeout, ReadableStream, WritableStream, TransformStream },
    });
    const api = runInContext(`${bundle.code}; agentPlugins`, realm);
    const inRealm = (bytes: Uint8Array) => new (runInContext('Uint8Array', realm))(bytes);
    const plain = (value: unknown) => JSON.parse(JSON.stringify(value));
    const folder = await validatePlugin(golden);
    expect(plain(await api.validatePlugin(api.readZip(inRealm(zipOf(folderTree(golden))))))).toEqual(plain(folder));
    expect(plain(await api.validatePlugin(await api.readTarGz(inRealm(tarGzOf(golden)))))).toEqual(plain(folder));
    expect(runInContext('typeof process + typeof Buffer + typeof require', realm)).toBe('undefinedundefinedundefined');
    // What an import of the upload would give: the folder's import, configuration, content and report.
    const shown = (imported: ImportedPlugin) =>
      plain({ ...imported, content: [...imported.content].map(([path, file]) => [path, [...file.bytes], file.mode]) });
    expect(shown(await api.importPlugin(api.readZip(inRealm(zipOf(folderTree(golden))))))).toEqual(
      shown(await importPlugin(golden)),
    );
  });
});
