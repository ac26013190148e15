#!/usr/bin/env node
import type { CliIO } from './io.js';
import { main, nativeBound } from './main.js';
import { GROUPS } from './table.js';

const argv = process.argv.slice(2);

// A command whose work runs in native code on the thread pool (zlib) tunes V8 for a process
// whose JavaScript is a tenth of the work:
// - No optimizing compiler (`--max-opt=1`): on two cores, TurboFan compiled ~100 functions in
//   the background during a `code bundle` of 2,000 files (~0.28 s of CPU taken from
//   compression). Node 20's V8 honours this flag set at run time; later ones read it at
//   start (there it changes nothing).
// - A new space that does not grow (`--semi-space-growth-factor=1`, read whenever V8 would
//   grow the space, on Node 20 to 24): a listing of thousands of files made V8 grow it from
//   4 to 8 MiB, and each fresh page of it is a page fault (~10 µs on the VMs this was
//   measured on). Kept at 4 MiB, 2,000 files took ~800 fewer faults, 16 collections of the
//   young generation instead of 12, and ~11 ms less of the main thread's CPU (30 alternating
//   runs); 10,000 files, ~34 ms less.
// Set here, not in main: this process is the command's own, while a host calling main()
// keeps its V8 as it is.
//
// Set once the command's code is loaded, not before: a flag changed at run time changes the
// hash V8 checks code caches against, so each built-in module loaded after it was compiled
// from its source instead of Node's code cache (set first, that was 23 modules: crypto's,
// zlib, the package resolver's). 2,000 files, 30 alternating runs: the first workspace file
// was opened 9-13 ms sooner this way, and the bundle was in place ~20 ms sooner. node:v8 is
// loaded only then (~3 ms of every other command's start): synchronously where Node has
// process.getBuiltinModule (20.16 and later; `import()` would start the ES module loader,
// 5-9 ms), else imported.
const BUNDLING_V8_FLAGS = '--max-opt=1 --semi-space-growth-factor=1';
const bundling = nativeBound(argv);
const ready = bundling
  ? GROUPS.code!.load().then(
      async () => {
        const v8 = process.getBuiltinModule?.('node:v8') ?? (await import('node:v8'));
        v8.setFlagsFromString(BUNDLING_V8_FLAGS);
      },
      () => {}, // main loads it again, and reports the failure
    )
  : undefined;

// The real streams, and whether each is a terminal: colour and progress need stderr to be one.
const io: CliIO = {
  stdout: { write: (text) => process.stdout.write(text), isTTY: process.stdout.isTTY === true },
  stderr: { write: (text) => process.stderr.write(text), isTTY: process.stderr.isTTY === true },
  env: process.env,
};

// No top-level await: the installed bin is this entry's CommonJS build (package.json "bin":
// dist/bin.cjs), which loads the CommonJS builds of the packages. Node starts that without its
// ES module loader: a one-file `code bundle` took 206-246 ms against 236-307 ms for the ES
// module build (medians of 21 alternating runs, three times), the same bytes out.
(ready === undefined ? main(argv, io) : ready.then(() => main(argv, io))).then(
  (code) => {
    // exitCode, not exit(): stdout may still be draining into a pipe.
    process.exitCode = code;
    // `code bundle` has nothing left to do once main resolves (the file is renamed into
    // place, the registry idle): once its output is written, the process ends at once
    // instead of tearing down its heap, zlib streams and threads one by one. 2,000 files:
    // 16-19 ms from the last line to the exit status, 9 ms with this (`node -e 0`: 7 ms).
    if (bundling) process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
  },
  (error: unknown) => {
    // main reports every failure itself; this is a bug in it, so the stack is worth having.
    process.stderr.write(
      `agentproto: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
