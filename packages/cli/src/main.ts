import { runCache } from './commands/cache.js';
import { runCode } from './commands/code.js';
import { runPlugin } from './commands/plugin.js';
import { runSkills } from './commands/skills.js';
import { reportFailure } from './failure.js';
import { type Group, groupHelp, isGroup, overview } from './help.js';
import { type CliIO, EXIT_OK } from './io.js';
import { type OutputOptions, type Terminal, openTerminal } from './terminal.js';
import { UsageError } from './usage.js';
import { VERSION } from './version.js';

const processIO: CliIO = { stdout: process.stdout, stderr: process.stderr };

const RUN: Readonly<Record<Group, (args: readonly string[], term: Terminal) => Promise<number>>> = {
  cache: runCache,
  code: runCode,
  skills: runSkills,
  plugin: runPlugin,
};

/**
 * Runs one `agentproto` command line (without the program name) and resolves to its exit
 * status: 0 done, 1 problems found, 2 wrong command line or a `--strict` failure. Failures
 * are printed to `io.stderr`, never thrown, so a host or a test can call it in-process.
 */
export async function main(argv: readonly string[], io: CliIO = processIO): Promise<number> {
  const { args, ...options } = outputOptions(argv);
  const term = openTerminal(io, options);
  try {
    return await dispatch(args, term);
  } catch (error) {
    return reportFailure(error, term, isGroup(args[0]) ? args[0] : undefined);
  } finally {
    term.clearStatus();
  }
}

async function dispatch(args: readonly string[], term: Terminal): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined) return printHelp(term, overview());
  if (command === 'help' || command === '-h' || command === '--help') {
    // `help plugin` and `--help plugin` are `plugin --help`; options after them change nothing.
    const [topic] = rest;
    if (topic === undefined || topic.startsWith('-')) return printHelp(term, overview());
    if (isGroup(topic)) return printHelp(term, groupHelp(topic));
    throw new UsageError(`no help for ${JSON.stringify(topic)}: the commands are cache, code, skills and plugin`);
  }
  if (command === '--version') {
    term.stdout.write(`${VERSION}\n`);
    return EXIT_OK;
  }
  if (!isGroup(command)) {
    throw new UsageError(
      command.startsWith('-') ? `unknown option ${command}` : `unknown command ${JSON.stringify(command)}`,
    );
  }
  // `-h` or `--help` anywhere asks for the group's help, whatever else the line holds.
  if (beforeSeparator(rest).some((arg) => arg === '-h' || arg === '--help')) return printHelp(term, groupHelp(command));
  return RUN[command](rest, term);
}

function printHelp(term: Terminal, text: string): number {
  term.stdout.write(text);
  return EXIT_OK;
}

/**
 * The options every command takes, wherever they stand: `--verbose` is taken out of the
 * command line (no command's own parser knows it); `--json` stays for the command, and is
 * only read here so that nothing decorates its output. Nothing after `--` is an option.
 */
function outputOptions(argv: readonly string[]): OutputOptions & { args: string[] } {
  const options = beforeSeparator(argv);
  const args = [...options.filter((arg) => arg !== '--verbose'), ...argv.slice(options.length)];
  return { args, verbose: options.includes('--verbose'), json: options.includes('--json') };
}

function beforeSeparator(args: readonly string[]): readonly string[] {
  const end = args.indexOf('--');
  return end === -1 ? args : args.slice(0, end);
}
