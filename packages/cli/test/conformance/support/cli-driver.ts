// A real process that runs `agentproto` once per case, as bin.ts does, and prints one JSON
// line per case: its exit status and what it wrote on stderr. Loading the CLI and every
// library from TypeScript source costs seconds, so one process runs a command's cases one
// after the other instead of one process each; a crash of the process (an uncaught error,
// an unhandled rejection, a hang) still shows, as a missing line or the process's own status.
import { readFileSync } from 'node:fs';
import { main } from '../../../src/main.js';

interface Case {
  argv: string[];
  cwd: string;
}

const cases = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Case[];
/** A case past this is a hang: reported, and the process goes on to the next. */
const TIMEOUT_MS = Number(process.argv[3] ?? 30_000);

for (const [index, { argv, cwd }] of cases.entries()) {
  process.chdir(cwd);
  let stdout = 0;
  let stderr = '';
  const io = {
    stdout: {
      write: (text: string) => {
        stdout += text.length;
      },
      isTTY: false,
    },
    stderr: {
      write: (text: string) => {
        stderr += text;
      },
      isTTY: false,
    },
    env: { PATH: process.env.PATH ?? '', HOME: cwd },
  };
  const began = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const status = await Promise.race([
    main(argv, io),
    new Promise<'timed-out'>((resolve) => {
      timer = setTimeout(() => resolve('timed-out'), TIMEOUT_MS);
    }),
  ]).catch(
    (error: unknown) => `main rejected: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
  clearTimeout(timer);
  process.stdout.write(
    `${JSON.stringify({ index, status, stderr: stderr.slice(0, 4_000), stdoutChars: stdout, ms: Date.now() - began })}\n`,
  );
}
