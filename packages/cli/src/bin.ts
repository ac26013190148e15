#!/usr/bin/env node
import type { CliIO } from './io.js';
import { main } from './main.js';

// The real streams, and whether each is a terminal: colour and progress need stderr to be one.
const io: CliIO = {
  stdout: { write: (text) => process.stdout.write(text), isTTY: process.stdout.isTTY === true },
  stderr: { write: (text) => process.stderr.write(text), isTTY: process.stderr.isTTY === true },
  env: process.env,
};

// No top-level await: tsup also emits this entry as CommonJS.
main(process.argv.slice(2), io).then(
  (code) => {
    // exitCode, not exit(): stdout may still be draining into a pipe.
    process.exitCode = code;
  },
  (error: unknown) => {
    // main reports every failure itself; this is a bug in it, so the stack is worth having.
    process.stderr.write(
      `agentproto: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
