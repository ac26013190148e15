import { spawnSync } from 'node:child_process';
import { access, lstat, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LAYER_TAR_GZIP, OCI_MANIFEST, OciClient } from '@agentproto/oci';
import { type OciRegistry, startOciRegistry } from '@agentproto/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../support/run.js';
import { scratchFolders } from '../support/scratch.js';

const scratch = scratchFolders();

let registry: OciRegistry;
beforeAll(async () => {
  registry = await startOciRegistry();
});
afterAll(async () => {
  await registry?.close();
});

const PLUGIN_JSON = `${JSON.stringify({ $schema: 'https://agent-plugins.org/schemas/1.0.0/plugin.schema.json', name: 'acme.tools', version: '1.2.0', description: 'd' })}\n`;
const SKILL = '---\nname: review\ndescription: Reviews.\n---\n# review\n';

/** A repository's metadata under `at`, whose core.fsmonitor touches `marker` on the next `git status`. */
function repository(at: string, marker: string): Record<string, string> {
  return {
    [`${at}/HEAD`]: 'ref: refs/heads/main\n',
    [`${at}/config`]: `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${marker}; false"\n`,
    [`${at}/objects/info/packs`]: '',
    [`${at}/refs/heads/.keep`]: '',
  };
}

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

async function hookRanAfterGitStatus(dir: string, marker: string): Promise<boolean> {
  spawnSync('git', ['-C', dir, 'status'], { env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(dir) } });
  return access(marker).then(
    () => true,
    () => false,
  );
}

async function namesBelow(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dir)) {
    out.push(name);
    if ((await lstat(join(dir, name))).isDirectory())
      out.push(...(await namesBelow(join(dir, name))).map((n) => `${name}/${n}`));
  }
  return out;
}

describe('agentproto plugin commands never write a .git entry', () => {
  it('plugin import of a package holding .git, .GIT and git~1 writes none of them, and git status in the result runs nothing', async () => {
    const top = await scratch();
    const marker = join(top, 'marker');
    const dir = join(top, 'package');
    await writeTree(dir, {
      'plugin.json': PLUGIN_JSON,
      'skills/review/SKILL.md': SKILL,
      'notes.md': 'n\n',
      ...repository('.git', marker),
      '.GIT/config': '[core]\n',
      'git~1/config': '[core]\n',
    });
    const out = join(top, 'imported');
    const outcome = await run(['plugin', 'import', dir, '--out', out, '--json']);
    expect(outcome.code).toBe(0);
    const result = JSON.parse(outcome.stdout) as {
      files: string[];
      config: { include?: string[] };
      findings: { code: string; path: string }[];
    };
    expect(result.files.sort()).toEqual(['notes.md', 'skills/review/SKILL.md']);
    expect(result.config.include).toEqual(['notes.md']);
    expect(
      result.findings
        .filter((f) => f.code === 'read.git-metadata')
        .map((f) => f.path)
        .sort(),
    ).toEqual(['.GIT', '.git', 'git~1']);
    expect((await namesBelow(out)).filter((name) => /(^|\/)(\.git|git~1)(\/|$)/i.test(name))).toEqual([]);
    expect(await hookRanAfterGitStatus(out, marker)).toBe(false);

    // Built again from the import: still nothing of the kind.
    const built = join(top, 'built');
    expect((await run(['plugin', 'build', join(out, 'plugin.config.json'), '--out', built])).code).toBe(0);
    expect((await namesBelow(built)).filter((name) => /(^|\/)(\.git|git~1)(\/|$)/i.test(name))).toEqual([]);
  });

  it('plugin pull refuses a layer holding .git and leaves nothing behind', async () => {
    const top = await scratch();
    const marker = join(top, 'marker');
    const client = new OciClient({ url: registry.url, repository: 'plugins/cli-git', allowInsecureHttp: true });
    const files = { 'plugin.json': PLUGIN_JSON, 'skills/review/SKILL.md': SKILL, ...repository('.git', marker) };
    // The layer as GNU tar writes it: a hostile publisher needs no special tool.
    const source = join(top, 'source');
    await writeTree(source, files);
    const layerFile = join(top, 'layer.tar.gz');
    expect(spawnSync('tar', ['-czf', layerFile, '-C', source, '.']).status).toBe(0);
    const layer = await client.pushBlob(await readFile(layerFile));
    await rm(source, { recursive: true });
    await rm(layerFile);
    const config = await client.pushBlob(
      Buffer.from(
        JSON.stringify({
          format: 1,
          name: 'acme.tools',
          version: '1.2.0',
          spec: '1.0.0',
          files: Object.keys(files).length,
        }),
      ),
    );
    await client.putManifest('v1', {
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      artifactType: 'application/vnd.agentproto.plugin.v1',
      config: {
        mediaType: 'application/vnd.agentproto.plugin.config.v1+json',
        digest: config.digest,
        size: config.size,
      },
      layers: [{ mediaType: LAYER_TAR_GZIP, digest: layer.digest, size: layer.size }],
    });
    const dir = join(top, 'pulled');
    const outcome = await run(['plugin', 'pull', `${registry.host}/plugins/cli-git:v1`, dir, '--insecure-http']);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('PLUGIN_OCI_UNSAFE_LAYER');
    expect(outcome.stderr).toContain('git-metadata');
    expect(await readdir(top)).toEqual([]);
  });
});
