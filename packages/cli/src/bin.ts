#!/usr/bin/env node
import { main } from './main.js';

// No top-level await: tsup also emits this entry as CommonJS.
main(process.argv.slice(2)).then(
  (code) => {
    // exitCode, not exit(): stdout may still be draining into a pipe.
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`agentproto: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
