import { ContentCacheError } from '@agentproto/content-cache';
import { runCache } from './commands/cache.js';
import { runCode } from './commands/code.js';
import { runPlugin } from './commands/plugin.js';
import { runSkills } from './commands/skills.js';
import { CommandError } from './command-error.js';
import { type CliIO, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './io.js';
import { UsageError, usage } from './usage.js';
import { VERSION } from './version.js';

const processIO: CliIO = { stdout: process.stdout, stderr: process.stderr };

/**
 * Runs one `agentproto` command line (without the program name) and resolves to its exit
 * code: 0 done, 1 failed, 2 wrong command line. Failures are printed to `io.stderr`, never
 * thrown, so a host or a test can call it in-process.
 */
export async function main(argv: readonly string[], io: CliIO = processIO): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    return reportFailure(error, io);
  }
}

async function dispatch(argv: readonly string[], io: CliIO): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case 'help':
    case '-h':
    case '--help':
      io.stdout.write(usage());
      return EXIT_OK;
    case '--version':
      io.stdout.write(`${VERSION}\n`);
      return EXIT_OK;
    case 'cache':
      return runCache(rest, io);
    case 'code':
      return runCode(rest, io);
    case 'skills':
      return runSkills(rest, io);
    case 'plugin':
      return runPlugin(rest, io);
    default:
      throw new UsageError(command.startsWith('-') ? `unknown option ${command}` : `unknown command ${JSON.stringify(command)}`);
  }
}

function hasStableCode(error: unknown): error is Error & { code: string } {
  const code: unknown = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code);
}

function reportFailure(error: unknown, io: CliIO): number {
  if (error instanceof UsageError) {
    io.stderr.write(`agentproto: ${error.message}\n\n${usage()}`);
    return EXIT_USAGE;
  }
  // Library errors carry a stable code a script can match on; the message names the path or key.
  if (error instanceof ContentCacheError || hasStableCode(error)) {
    io.stderr.write(`agentproto: ${error.code}: ${error.message}\n`);
    return EXIT_FAILURE;
  }
  if (error instanceof CommandError) {
    io.stderr.write(`agentproto: ${error.message}\n`);
    return EXIT_FAILURE;
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  io.stderr.write(`agentproto: unexpected error: ${detail}\n`);
  return EXIT_FAILURE;
}
