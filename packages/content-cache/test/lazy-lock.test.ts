import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * proper-lockfile is loaded at the first lock, not at import: a process that never fills a
 * store does not pay for it (and graceful-fs, retry and signal-exit) at start-up.
 */
describe('the lock library is loaded at the first lock', () => {
  it('is absent after importing the store and present once a fill took a lock', () => {
    const script = `
      import { createRequire } from 'node:module';
      import { mkdtempSync, rmSync } from 'node:fs';
      import { join } from 'node:path';
      import { tmpdir } from 'node:os';
      const require = createRequire(import.meta.url);
      const lockLibrary = () => Object.keys(require.cache).some((path) => path.includes('proper-lockfile'));
      const { openContentStore } = await import('@agentproto/content-cache');
      const atImport = lockLibrary();
      const root = mkdtempSync(join(tmpdir(), 'agentproto-lazy-lock-'));
      try {
        const store = await openContentStore({ root: join(root, 'store') });
        const afterOpen = lockLibrary();
        const key = { provider: 'p', declaration: {}, version: 'v', contentId: 'c' };
        await store.acquire(key, async (_destination, ctx) => ctx.writeFile('a.txt', 'a'));
        console.log(JSON.stringify({ atImport, afterOpen, afterFill: lockLibrary() }));
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    `;
    const out = execFileSync(
      process.execPath,
      ['--conditions=@agentproto/source', '--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: repoRoot, encoding: 'utf8' },
    );
    expect(JSON.parse(out)).toEqual({ atImport: false, afterOpen: false, afterFill: true });
  });
});
