import { spawn } from 'node:child_process';

/** What a child printed and how it ended. */
export interface ChildOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Our environment without the npm_* and pnpm_* variables `pnpm test` exports: pnpm and npm read them as configuration. */
export function withoutPackageManagerEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(([key]) => !/^p?npm_/i.test(key));
  return { ...Object.fromEntries(kept), ...extra };
}

/** Runs `file args` with no stdin and collects its output; resolves whatever its exit status. */
export function runChild(
  file: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeout?: number },
): Promise<ChildOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
