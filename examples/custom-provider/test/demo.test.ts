import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));

describe('the start script (src/demo.ts)', () => {
  it('serves a pinned skill pack on 127.0.0.1, prepares it cold then as hits through the provider loaded by name, and removes everything', async () => {
    // What `pnpm --filter @agentproto/example-custom-provider start` runs, in the package folder.
    // Without the NODE_PATH a package manager's shim sets: the package is found by its name only.
    const { NODE_PATH: _, ...env } = process.env;
    const { stdout, stderr } = await run(
      process.execPath,
      ['--conditions=@agentproto/source', '--import', 'tsx', 'src/demo.ts'],
      {
        cwd: packageDir,
        env,
        timeout: 120_000,
      },
    );
    expect(stderr).toBe('');
    const pin = /^ {3}(sha256:[0-9a-f]{64})$/m.exec(stdout)?.[1];
    expect(pin).toBeDefined();
    expect(stdout).toContain(`"version": "${pin}"`);
    expect(stdout).toContain('--provider-package @agentproto/example-custom-provider');

    // Cold: each skill fetched, its directory printed with its files and SKILL.md.
    const review = /^ {3}review {2}fetched {2}(\/\S+)$/m.exec(stdout)?.[1];
    const notes = /^ {3}release-notes {2}fetched {2}(\/\S+)$/m.exec(stdout)?.[1];
    expect(review).toBeDefined();
    expect(notes).toBeDefined();
    expect(stdout).toContain('files: SKILL.md, checklist.md');
    expect(stdout).toContain('files: SKILL.md, scripts/changes.sh');
    expect(stdout).toContain('        # Review\n');
    expect(stdout).toContain('        # Release notes\n');
    expect(stdout).toContain('the server saw 2 HEAD and 2 GET requests');

    // Then the same directories again, as hits, with nothing downloaded.
    expect(stdout).toContain(`   review  hit  ${review}\n`);
    expect(stdout).toContain(`   release-notes  hit  ${notes}\n`);
    expect(stdout).toContain(
      'the server saw 2 HEAD (each preparation checks the token) and 0 GET requests (nothing downloaded)',
    );

    // The CLI, on the same store.
    expect(stdout).toContain(`   review  ${review}  ${pin}  (cached)\n`);

    const root = /^removed (\/\S+)$/m.exec(stdout)?.[1];
    expect(root).toBeDefined();
    expect(review!.startsWith(root!)).toBe(true);
    expect(existsSync(root!)).toBe(false);
  });
});
