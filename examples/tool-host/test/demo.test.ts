import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));

describe('the start script (src/demo.ts)', () => {
  it('registers a tool from the GitHub stand-in, refuses a broken manifest, runs the tool and shows the recorded commit', async () => {
    // What `pnpm --filter @agentproto/example-tool-host start` runs, in the package folder.
    const { stdout } = await exec(
      process.execPath,
      ['--conditions=@agentproto/source', '--import', 'tsx', 'src/demo.ts'],
      { cwd: packageDir, timeout: 60_000 },
    );
    const commit = /tag v1\.0\.0 → ([0-9a-f]{40})/.exec(stdout)?.[1];
    expect(commit).toBeDefined();
    expect(stdout).toContain(`sources[0]  github  2 files  acme/hello-tool@v1.0.0 (tag) → ${commit}`);
    expect(stdout).toContain('/code/sources/1  AIP26_SOURCE_UNRESOLVED (unsafe-path)');
    expect(stdout).toContain('/code/sources/2  AIP26_SOURCE_UNRESOLVED (ref-unresolved)');
    expect(stdout).toContain('Hello, tool host! (hello-tool 1.0.0)');
    expect(stdout).toContain(`"commit": "${commit}"`);
  });
});
