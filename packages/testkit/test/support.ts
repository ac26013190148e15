// Client-side helpers for the testkit's own tests: system git with no user config.
import { CommandFailedError, isolatedGitEnv, run, type RunResult } from '@agentproto/testkit';

export function git(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<RunResult> {
  return run('git', args, { env: isolatedGitEnv(env), cwd });
}

/** Runs git expecting failure; resolves with the error so the test can check why. */
export async function gitFails(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CommandFailedError> {
  try {
    await git(args, env);
  } catch (error) {
    if (error instanceof CommandFailedError) return error;
    throw error;
  }
  throw new Error(`git ${args.join(' ')} succeeded but should have failed`);
}
