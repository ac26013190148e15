// The host as a command: register a tool manifest, run a registered tool, list the registry.
//
//   node --conditions=@agentproto/source --import tsx examples/tool-host/src/host.ts \
//     register <manifest.json> [--workspace DIR] [--state DIR] [--github-url URL] [--json]
//   … run <name> [--env KEY=VALUE]... [--state DIR] [--github-url URL] [--json]
//   … list [--state DIR] [--json]
//
// A token for private repositories comes from GITHUB_TOKEN. The tool's process gets PATH
// and the --env pairs, nothing else of this process's environment.
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DOCUMENT_LIMITS, DocumentError, parseUntrustedJson, readBoundedFile } from '@agentproto/documents';
import { ToolRefusedError } from './errors.js';
import { describeProblems, describeTool } from './format.js';
import { openToolHost } from './tool-host.js';

const USAGE = [
  'usage: host.ts register <manifest.json> [--workspace DIR] [--state DIR] [--github-url URL] [--json]',
  '       host.ts run <name> [--env KEY=VALUE]... [--state DIR] [--github-url URL] [--json]',
  '       host.ts list [--state DIR] [--json]',
].join('\n');

/** Exit status of a run that hit runner.limits.timeout_ms, as timeout(1) uses. */
const EXIT_TIMED_OUT = 124;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        state: { type: 'string' },
        'github-url': { type: 'string' },
        workspace: { type: 'string' },
        env: { type: 'string', multiple: true },
        json: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, target, ...extra] = positionals;
  if (extra.length > 0 || (command !== 'list' && target === undefined))
    throw new UsageError('wrong number of arguments');
  const host = await openToolHost({
    // The default keeps the example self-contained; a real host keeps its state outside every workspace.
    stateDir: resolve(values.state ?? join(tmpdir(), 'agentproto-example-tool-host')),
    githubUrl: values['github-url'],
    getToken: () => process.env.GITHUB_TOKEN,
  });
  const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

  if (command === 'register') {
    const file = resolve(target!);
    const tool = await host.register(await readManifest(file), {
      workspaceRoot: resolve(values.workspace ?? dirname(file)),
    });
    if (values.json) print(tool);
    else process.stdout.write(describeTool(tool, host.registry.file));
    return 0;
  }
  if (command === 'run') {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    for (const pair of values.env ?? []) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new UsageError(`--env takes KEY=VALUE, not ${JSON.stringify(pair)}`);
      env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    const result = await host.run(target!, { env });
    if (values.json) print({ ...result, stdout: result.stdout.toString(), stderr: result.stderr.toString() });
    else {
      process.stdout.write(result.stdout);
      process.stderr.write(result.stderr);
    }
    if (result.timedOut) return EXIT_TIMED_OUT;
    return result.exitCode ?? 1;
  }
  if (command === 'list') {
    const tools = await host.list();
    if (values.json) print(tools);
    else for (const tool of tools) process.stdout.write(describeTool(tool, host.registry.file));
    return 0;
  }
  throw new UsageError(command === undefined ? 'no command' : `unknown command ${JSON.stringify(command)}`);
}

/**
 * A manifest that is not JSON is refused like any other bad manifest. It is someone else's
 * file: read no further than the limit and parsed with the SDK's bounded parser, so one that
 * is huge, nested without end or not UTF-8 is a refusal naming the rule, never a dead host.
 */
async function readManifest(file: string): Promise<unknown> {
  try {
    return parseUntrustedJson(await readBoundedFile(file, DOCUMENT_LIMITS.maxBytes, 'json'), { source: file });
  } catch (error) {
    if (!(error instanceof DocumentError)) throw error;
    throw new ToolRefusedError(undefined, [{ code: 'TOOL_MANIFEST_INVALID', pointer: '', message: error.message }]);
  }
}

function report(error: unknown, json: boolean): number {
  if (error instanceof UsageError) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    return 2;
  }
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (json && typeof code === 'string') {
    // The fields of a host or AIP-26 error are facts about the manifest, none holds a token;
    // `cause` is left out: it is another layer's error, with its own facts.
    const { cause: _cause, ...facts } = error as Record<string, unknown>;
    process.stdout.write(`${JSON.stringify({ error: { ...facts, code, message } }, null, 2)}\n`);
    return 1;
  }
  process.stderr.write(`error: ${typeof code === 'string' ? `${code}: ` : ''}${String(message ?? error)}\n`);
  if (error instanceof ToolRefusedError) {
    process.stderr.write(describeProblems(error.problems));
  }
  return 1;
}

const argv = process.argv.slice(2);
main(argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = report(error, argv.includes('--json'));
  },
);
