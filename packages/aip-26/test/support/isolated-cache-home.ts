import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

// githubConnector keeps fetched directories in the store at defaultCacheRoot() unless told
// otherwise (AIP-26: "Hosts MUST cache fetched github tarballs"), and that folder comes
// from XDG_CACHE_HOME. Every test file of this package gets its own, under the system's
// temporary folder, so no test writes into the cache of the user who runs it.
const cacheHome = mkdtempSync(join(tmpdir(), 'aip26-xdg-cache-'));
process.env.XDG_CACHE_HOME = cacheHome;

afterAll(() => {
  rmSync(cacheHome, { recursive: true, force: true });
});
