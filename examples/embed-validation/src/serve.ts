// Starts the validation endpoint on 127.0.0.1 until Ctrl-C.
//
//   node --conditions=@agentproto/source --import tsx examples/embed-validation/src/serve.ts \
//     [--port 8787] [--max-body-bytes N] [--max-unpacked-bytes N] [--max-files N] [--max-concurrent N] [--temp-root DIR]
//
// Prints "listening on http://127.0.0.1:PORT" once it accepts requests (--port 0 lets the
// system pick the port).
import { parseArgs } from 'node:util';
import { startValidationServer } from './server.js';

const USAGE =
  'usage: serve.ts [--port 8787] [--max-body-bytes N] [--max-unpacked-bytes N] [--max-files N] [--max-concurrent N] [--temp-root DIR]';

function count(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number))
    throw new Error(`--${name} takes a whole number, not ${JSON.stringify(value)}`);
  return number;
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'max-unpacked-bytes': { type: 'string' },
      'max-files': { type: 'string' },
      'max-concurrent': { type: 'string' },
      'temp-root': { type: 'string' },
    },
  });
  const server = await startValidationServer({
    port: count('port', values.port),
    maxBodyBytes: count('max-body-bytes', values['max-body-bytes']),
    maxUnpackedBytes: count('max-unpacked-bytes', values['max-unpacked-bytes']),
    maxFiles: count('max-files', values['max-files']),
    maxConcurrent: count('max-concurrent', values['max-concurrent']),
    tempRoot: values['temp-root'],
    onError: (error) =>
      process.stderr.write(
        `validation failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      ),
  });
  process.stdout.write(`listening on ${server.url} (POST a .tar.gz to ${server.url}/validate)\n`);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
  process.exitCode = 2;
});
