import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { startGitHttpServer, tempDir, type GitHttpServer, type GitHttpServerOptions } from '@agentproto/testkit';
import type { RemoteRefs } from '../../src/index.js';

const cleanups: Array<() => Promise<void>> = [];

// Every test tears down what it started, servers before the folders they serve.
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh folder under os.tmpdir(), removed after the test. */
export async function scratch(): Promise<string> {
  const dir = await tempDir('agentproto-git-test-');
  cleanups.push(dir.cleanup);
  return dir.path;
}

/** A git smart-HTTP server on 127.0.0.1, closed after the test. */
export async function serve(options: GitHttpServerOptions): Promise<GitHttpServer> {
  const server = await startGitHttpServer(options);
  cleanups.push(() => server.close());
  return server;
}

/**
 * Everything under `dir`, one line per entry, as a test expects it:
 * `'file 755 <content>'`, `'link <target>'`, `'dir'`.
 */
export async function listTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string): Promise<void> => {
    for (const name of (await readdir(join(dir, rel))).sort()) {
      const path = rel === '' ? name : `${rel}/${name}`;
      const stat = await lstat(join(dir, path));
      if (stat.isSymbolicLink()) out[path] = `link ${await readlink(join(dir, path))}`;
      else if (stat.isDirectory()) {
        out[path] = 'dir';
        await walk(path);
      } else out[path] = `file ${(stat.mode & 0o777).toString(8)} ${await readFile(join(dir, path), 'utf8')}`;
    }
  };
  await walk('');
  return out;
}

/** The error a promise rejects with (a test fails if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected a rejection');
}

/** The `git ls-remote` view of listRefs' answer: one line per ref, `^{}` lines for peeled tags. */
export function asLsRemote(listed: RemoteRefs): Record<string, string> {
  const out: Record<string, string> = {};
  for (const ref of listed.refs) {
    out[ref.name] = ref.oid;
    if (ref.peeled !== undefined) out[`${ref.name}^{}`] = ref.peeled;
  }
  return out;
}
