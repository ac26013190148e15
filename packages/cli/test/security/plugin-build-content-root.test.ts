import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../support/run.js';
import { scratchFolders } from '../support/scratch.js';

const scratch = scratchFolders();
const HOST_SECRET = 'host-secret-5d1e88';

describe('agentproto plugin build keeps the content root inside the project', () => {
  it('refuses content_root = "../../../../etc"-style paths and writes nothing', async () => {
    const top = await scratch();
    await mkdir(join(top, 'host', 'skills', 'leak'), { recursive: true });
    await writeFile(join(top, 'host', 'secret.txt'), HOST_SECRET);
    await mkdir(join(top, 'project'));
    const config = join(top, 'project', 'plugin.toml');
    const out = join(top, 'out');
    for (const root of ['../host', '../../../../../../../../etc']) {
      await writeFile(
        config,
        `[plugin]\nname = "acme.tools"\nversion = "1.0.0"\ndescription = "d"\ncontent_root = ${JSON.stringify(root)}\ninclude = ["**"]\n`,
      );
      for (const command of ['build', 'emit']) {
        const outcome = await run(['plugin', command, config, '--out', out]);
        expect(outcome.code).toBe(1);
        expect(outcome.stderr).toContain('PLUGIN_CONTENT_ROOT_OUTSIDE');
        expect(outcome.stdout + outcome.stderr).not.toContain(HOST_SECRET);
        await expect(access(out)).rejects.toMatchObject({ code: 'ENOENT' });
      }
    }
  });
});
