import { main } from '../../src/index.js';

export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** How the streams look to the command: terminals or not, and its environment. */
export interface RunOptions {
  stdoutTTY?: boolean;
  stderrTTY?: boolean;
  env?: Readonly<Record<string, string | undefined>>;
}

/** Runs `agentproto <argv>` in-process and returns what it printed and its exit code. */
export async function run(argv: string[], options: RunOptions = {}): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: {
      write: (text: string) => (stdout += text),
      ...(options.stdoutTTY === undefined ? {} : { isTTY: options.stdoutTTY }),
    },
    stderr: {
      write: (text: string) => (stderr += text),
      ...(options.stderrTTY === undefined ? {} : { isTTY: options.stderrTTY }),
    },
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  return { code, stdout, stderr };
}

/** Runs a `--json` command that must succeed and returns its one JSON document. */
export async function runJson<T = Record<string, unknown>>(argv: string[]): Promise<T> {
  const outcome = await run([...argv, '--json']);
  if (outcome.code !== 0) throw new Error(`agentproto ${argv.join(' ')} exited ${outcome.code}: ${outcome.stderr}`);
  return JSON.parse(outcome.stdout) as T;
}
