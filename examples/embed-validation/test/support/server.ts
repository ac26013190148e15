import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { type ValidationServer, type ValidationServerOptions, startValidationServer } from '../../src/index.js';

export interface TestServer extends ValidationServer {
  /** The folder holding `tempRoot`, to show nothing was written beside it either. */
  base: string;
  /** What is left in the temp root and beside it. */
  leftovers(): Promise<{ tempRoot: string[]; base: string[] }>;
}

const started: { server: ValidationServer; base: string }[] = [];

/** The validation server on 127.0.0.1 with a port the system picks and a temp root of the test's own, stopped after the test. */
export async function startTestServer(options: ValidationServerOptions = {}): Promise<TestServer> {
  const base = await mkdtemp(join(tmpdir(), 'embed-validation-test-'));
  const tempRoot = join(base, 'tmp');
  await mkdir(tempRoot);
  const server = await startValidationServer({ port: 0, tempRoot, ...options });
  started.push({ server, base });
  return {
    ...server,
    base,
    leftovers: async () => ({ tempRoot: await readdir(tempRoot), base: await readdir(base) }),
  };
}

afterEach(async () => {
  await Promise.all(
    started.splice(0).map(async ({ server, base }) => {
      await server.close();
      await rm(base, { recursive: true, force: true });
    }),
  );
});
