import { posix } from 'node:path';
import { RunResolutionError } from './errors.js';
import { type RunOptions, type RunValue, parseRun } from './parse.js';
import { DEFAULT_RUNNERS, runnerFor } from './runners.js';

/** The process to start for a `run` block: `cmd` with `args`, in `cwd` (the bundle root). */
export interface ResolvedRun {
  readonly cmd: string;
  readonly args: string[];
  readonly form: 'file' | 'exec' | 'shell';
  /** The bundle-internal file, for the file form. */
  readonly file?: string;
  /** The folder to start in: the bundle root (ADAPTER.md: "CWD = bundle root"). */
  readonly cwd: string;
}

/**
 * Turns a `run` block into the command the runner starts (AIP-26 "run — three forms",
 * ADAPTER.md "run resolution at startup"):
 * - `"tool.ts"`, `{ file: "tool.ts" }` → the runner for the extension (`npx --yes tsx`,
 *   `node`, `python`, `bash`) with `<bundleRoot>/<file>`; the file must be bundle-internal
 *   (`PathError` otherwise) and have a known extension (`RunResolutionError` otherwise);
 * - `["python", "-m", "x"]`, `{ exec: [...] }` → that argv, verbatim, no shell;
 * - a string with `&&`, `||`, `|`, `;`, `>`, `<`, backtick, `$(`, `${` or a newline, or
 *   with several words of which the first is not a file with a known extension, and
 *   `{ shell: "…" }` → `bash -c <string>`, verbatim;
 * - an explicit `{ file | exec | shell }` is honoured whatever its value looks like; two
 *   of them are refused.
 * `bundleRoot` is where the runner sees the bundle (a POSIX path inside the sandbox).
 *
 * @example
 * ```ts
 * import { resolveRun } from '@agentproto/aip-26';
 *
 * const { cmd, args, cwd } = resolveRun('server.py --port 8080', '/workspace/bundle');
 * // cmd 'python', args ['/workspace/bundle/server.py', '--port', '8080'], cwd '/workspace/bundle'
 * spawn(cmd, args, { cwd, env: {} });
 * ```
 *
 * @throws {RunResolutionError} `AIP26_RUN_INVALID`: the block names no runnable thing (`reason`:
 *   `invalid-shape`, `ambiguous`, `empty`, `nul`, `unbalanced-quote`, `unknown-extension`,
 *   `invalid-bundle-root`).
 * @throws {PathError} `AIP26_UNSAFE_PATH`: the file form names a path outside the bundle.
 */
export function resolveRun(run: RunValue, bundleRoot: string, options: RunOptions = {}): ResolvedRun {
  if (typeof bundleRoot !== 'string' || bundleRoot === '' || bundleRoot.includes('\0')) {
    throw new RunResolutionError(
      'invalid-bundle-root',
      run,
      `bundle root ${JSON.stringify(bundleRoot)} is not a usable folder path`,
    );
  }
  const cwd = posix.normalize(bundleRoot);
  const parsed = parseRun(run, options);
  switch (parsed.form) {
    case 'exec': {
      const [cmd, ...args] = parsed.argv;
      return { cmd, args, form: 'exec', cwd };
    }
    case 'shell':
      return { cmd: 'bash', args: ['-c', parsed.command], form: 'shell', cwd };
    case 'file': {
      const runner = runnerFor(options.runners ?? DEFAULT_RUNNERS, posix.extname(parsed.file));
      // parseRun found the runner already; this only satisfies the type checker.
      if (runner === undefined)
        throw new RunResolutionError('unknown-extension', run, `no runner for ${JSON.stringify(parsed.file)}`);
      const [cmd, ...runnerArgs] = runner;
      // `file` is canonical and bundle-internal (no `..`, not absolute), so the join stays
      // below the root; checked again because this path is what the runner executes.
      const target = posix.join(cwd, parsed.file);
      const relative = posix.relative(posix.resolve(cwd), posix.resolve(target));
      if (relative === '' || relative === '..' || relative.startsWith('../') || posix.isAbsolute(relative)) {
        throw new RunResolutionError(
          'invalid-shape',
          run,
          `file ${JSON.stringify(parsed.file)} is not inside the bundle root`,
        );
      }
      return { cmd, args: [...runnerArgs, target, ...parsed.args], form: 'file', file: parsed.file, cwd };
    }
  }
}
