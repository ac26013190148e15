import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { OciClient } from '@agentproto/oci';
import { gnuTarSortNameListing, type OciRegistry, startOciRegistry, tarListing } from '@agentproto/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushPlugin } from '../../src/index.js';

// Agent Plugins 1.0.0 spec.md, rationale: plugins are directories "inspectable with standard
// tools (`ls`, `cat`, `git`)". The layer agentproto pushes for a plugin is that directory as
// a tar.gz, and it is written in the one archive order of the SDK (content-cache
// `sortInArchiveOrder`, AIP-26 ADAPTER.md "Overlay merge": "The tar entry order SHOULD be
// sorted (lexicographic by path)"), read as GNU tar `--sort=name`: so the pushed layer lists,
// entry for entry, what `tar -c --sort=name` lists for the package the pull gives back.

const golden = fileURLToPath(new URL('../golden/1.0.0/', import.meta.url));

let registry: OciRegistry;
const made: string[] = [];
beforeAll(async () => {
  registry = await startOciRegistry();
});
afterAll(async () => {
  await registry?.close();
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('pushPlugin: the layer lists in GNU tar --sort=name order', () => {
  it('a package whose skill holds x/, x-y.md and x.md: the pushed layer equals `tar -c --sort=name` of the same files', async () => {
    const work = await mkdtemp(join(tmpdir(), 'agent-plugins-order-'));
    made.push(work);
    const pkg = join(work, 'acme.tools');
    await cp(golden, pkg, { recursive: true });
    // "-" and "." sort below "/": a sort of full paths by their bytes puts these before x/.
    await mkdir(join(pkg, 'skills/review/x'), { recursive: true });
    await writeFile(join(pkg, 'skills/review/x/a.md'), 'a\n');
    await writeFile(join(pkg, 'skills/review/x-y.md'), 'x-y\n');
    await writeFile(join(pkg, 'skills/review/x.md'), 'x.\n');

    const repo = 'plugins/order';
    const pushed = await pushPlugin(pkg, `${registry.host}/${repo}:v1`, { allowInsecureHttp: true });
    const client = new OciClient({ url: registry.url, repository: repo, allowInsecureHttp: true });
    const layer = gunzipSync(await client.getBlob(pushed.layer.digest, 16 << 20));
    const ours = await tarListing(layer);

    // The same files on disk (GNU tar unpacks the layer), listed by GNU tar --sort=name.
    const tree = join(work, 'tree');
    await mkdir(tree);
    execFileSync('tar', ['-x', '-C', tree], { input: layer });
    expect(ours).toEqual(await gnuTarSortNameListing(tree));
    const names = ours.map(([name]) => name);
    expect(names).toContain('skills/review/x-y.md');
    expect(names.indexOf('skills/review/x/a.md')).toBeLessThan(names.indexOf('skills/review/x-y.md'));
  });
});
