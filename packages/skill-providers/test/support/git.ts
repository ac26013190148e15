import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import {
  type GitHttpServer,
  type GitHttpServerOptions,
  makeRepo,
  type RepoSpec,
  startGitHttpServer,
} from '@agentproto/testkit';
import { localSandbox, type Sandbox, type RunOptions } from '@agentproto/skill-providers';
import { tempDir } from './temp.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A bare repository made from `spec` under a fresh root, served over smart HTTP. */
export async function servedRepo(
  spec: Omit<RepoSpec, 'root' | 'name'>,
  options: Omit<GitHttpServerOptions, 'root'> = {},
) {
  const root = await tempDir();
  const repo = await makeRepo({ root, name: 'skills.git', ...spec });
  const server: GitHttpServer = await startGitHttpServer({ root, ...options });
  closers.push(() => server.close());
  return { repo, server, url: server.urlFor('skills.git') };
}

interface RecordedRun {
  argv: string[];
  env: Record<string, string>;
}

/** localSandbox with a fresh private root, recording every command it runs. */
export async function recordingSandbox(options: Parameters<typeof localSandbox>[0] = {}) {
  const privateRoot = await tempDir();
  const base = localSandbox({ privateRoot, ...options });
  const runs: RecordedRun[] = [];
  const written: string[] = [];
  let beforeRun: ((argv: readonly string[]) => void | Promise<void>) | undefined;
  const sandbox: Sandbox = {
    ...base,
    async run(argv: readonly string[], runOptions: RunOptions) {
      runs.push({ argv: [...argv], env: { ...runOptions.env } });
      await beforeRun?.(argv);
      return base.run(argv, runOptions);
    },
    async writeFile(path, data, writeOptions) {
      written.push(path);
      return base.writeFile(path, data, writeOptions);
    },
  };
  return {
    sandbox,
    privateRoot,
    runs,
    written,
    onRun(hook: typeof beforeRun) {
      beforeRun = hook;
    },
  };
}

/** The git subcommand of an argv (`fetch`, `ls-remote`, …), skipping `-c x=y` and other options. */
export function gitSubcommand(argv: readonly string[]): string | undefined {
  // A fetch under a pack cap runs as `prlimit --fsize=N -- sh -c '<script>' git …`: git's own argv starts after it.
  const start = argv[0]?.endsWith('prlimit') ? argv.indexOf('sh') + 3 : 0;
  for (let index = start + 1; index < argv.length; index += 1) {
    const arg = argv[index] as string;
    if (arg === '-c') index += 1;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/** Every file under `dir` (following nothing), with its content, for searching canaries. */
export async function everyFileText(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
      const path = join(folder, entry.name);
      out.push(path);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) out.push(await readFile(path, 'utf8'));
    }
  };
  await walk(dir);
  return out;
}
