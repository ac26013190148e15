import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RegistrationProblem } from '../../src/index.js';
import { host, json } from '../support/host.js';
import { tempDir } from '../support/temp.js';

async function setUp(manifest: unknown, files: Record<string, string> = {}): Promise<{ file: string; state: string }> {
  const workspace = await tempDir('tool-host-workspace-');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(workspace, path, '..'), { recursive: true });
    await writeFile(join(workspace, path), content);
  }
  const file = join(workspace, 'tool.json');
  await writeFile(file, JSON.stringify(manifest));
  return { file, state: await tempDir('tool-host-state-') };
}

// EXAMPLES.md 6: "`run: reports/quarterly.ts` resolves inside the merged tarball"; ADAPTER.md
// "Error surface": materialization errors "MUST surface BEFORE the runner is provisioned".
// Registration is that check: a run file the bundle lacks is a problem at /run, and nothing
// is recorded.
describe('EXAMPLES.md 6 "run … resolves inside the merged tarball": register refuses a run file missing from the bundle', () => {
  it('AIP26_RUN_FILE_MISSING at /run, naming the file; nothing recorded', async () => {
    const { file, state } = await setUp({
      name: 'lost',
      code: { sources: [{ inline: { path: 'main.js', content: 'console.log(1)' } }] },
      run: 'tool.js',
    });
    const output = await host(['register', file, '--state', state, '--json']);
    expect(output.code).toBe(1);
    const { error } = json<{ error: { code: string; problems: RegistrationProblem[] } }>(output);
    expect(error.code).toBe('TOOL_REFUSED');
    expect(error.problems).toEqual([
      {
        code: 'AIP26_RUN_FILE_MISSING',
        pointer: '/run',
        reason: 'not-in-bundle',
        message: 'run file "tool.js" is not in the bundle',
      },
    ]);
    await expect(access(join(state, 'registry.json'))).rejects.toThrow();
  });
});

// ADAPTER.md "Inheritance semantics": "`runner` — Inherited. Tool MAY override fields
// field-by-field"; the referencing manifest wins at every level of a ref chain.
describe('ADAPTER.md "Inheritance semantics": run applies the runner limits the tool inherits', () => {
  const SLOW = 'setTimeout(() => console.log("finished"), 1500)';

  it('a timeout set by the referenced code-workspace stops the tool (exit 124)', async () => {
    const { file, state } = await setUp(
      { name: 'slow', code: './cw/a', run: 'slow.js' },
      {
        'cw/a/manifest.yaml': `kind: code-workspace\ncode: { sources: [ { inline: { path: slow.js, content: ${JSON.stringify(SLOW)} } } ] }\nrunner: { limits: { timeout_ms: 300 } }\n`,
      },
    );
    expect((await host(['register', file, '--state', state])).code).toBe(0);
    expect((await host(['run', 'slow', '--state', state])).code).toBe(124);
  });
});
