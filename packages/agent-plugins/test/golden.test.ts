import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  buildPlugin,
  importPlugin,
  loadPluginConfig,
  readPackageFiles,
  validatePlugin,
  writePlugin,
} from '../src/index.js';

/**
 * The golden packages in test/golden/<version>/ are what the project writes for
 * test/golden/source/plugin.toml. They are checked in and read by eye when they change:
 * `AGENTPROTO_UPDATE_GOLDEN=1 npx vitest run --project agent-plugins test/golden.test.ts`
 * rewrites them from the current code.
 */
const golden = fileURLToPath(new URL('./golden/', import.meta.url));
const update = process.env.AGENTPROTO_UPDATE_GOLDEN === '1';
const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const asText = (files: ReadonlyMap<string, Uint8Array>) =>
  [...files.entries()].map(([path, bytes]) => [path, Buffer.from(bytes).toString('utf8')]).sort();

describe.each(['1.0.0', '1.1.0'] as const)('the golden %s package', (spec) => {
  it('is what the configuration builds, byte for byte', async () => {
    const loaded = await loadPluginConfig(join(golden, 'source/plugin.toml'));
    const pkg = await buildPlugin(loaded.config, { contentRoot: loaded.contentRoot, spec });
    expect(pkg.rejected).toBe(false);
    if (update) await writePlugin(pkg.files, join(golden, spec), { replace: true });
    const onDisk = await readPackageFiles(join(golden, spec));
    expect(asText(onDisk)).toEqual(asText(new Map([...pkg.files].map(([path, file]) => [path, file.bytes]))));
  });

  it('loads without a finding, as a conformant client loads it', async () => {
    const result = await validatePlugin(join(golden, spec));
    expect(result).toMatchObject({
      spec,
      rejected: false,
      findings: [],
      skills: ['release', 'review'],
      servers: ['acme-docs', 'acme-index'],
    });
  });

  it('imports into a configuration that builds it again, byte for byte', async () => {
    const imported = await importPlugin(join(golden, spec));
    expect(imported.rejected).toBe(false);
    const content = join(await mkdtemp(join(tmpdir(), 'agent-plugins-golden-')), 'content');
    made.push(join(content, '..'));
    await writePlugin(imported.content, content);
    const rebuilt = await buildPlugin(imported.config!, { contentRoot: content, spec });
    const onDisk = await readPackageFiles(join(golden, spec));
    expect(asText(new Map([...rebuilt.files].map(([path, file]) => [path, file.bytes])))).toEqual(asText(onDisk));
  });
});
