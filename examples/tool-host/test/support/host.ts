import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../../..', import.meta.url));

export interface HostOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the host program as its usage line says, from the repository root, in its own process. */
export async function host(args: readonly string[], env: Record<string, string> = {}): Promise<HostOutput> {
  const argv = ['--conditions=@agentproto/source', '--import', 'tsx', 'examples/tool-host/src/host.ts', ...args];
  return exec(process.execPath, argv, { cwd: repoRoot, env: { ...process.env, ...env }, timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );
}

/** The JSON a `--json` command printed on stdout. */
export function json<T = Record<string, unknown>>(output: HostOutput): T {
  try {
    return JSON.parse(output.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${output.code}): ${output.stdout}\n${output.stderr}`);
  }
}
