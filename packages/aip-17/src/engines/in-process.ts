import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { assertRunFileInBundle, extractTarGz, resolveRun } from '@agentproto/aip-26';
import type { ExitReason } from '@agentproto/sandbox';
import type { ResolvedRunnerHandle } from '../define/types.js';
import { RunnerEngineError } from './errors.js';
import type { LocalRunOptions } from './local.js';
import type { Enforcement, RunOutcome, RunnerRequest } from './types.js';

/**
 * What an in-process bundle's default export is called with. Its output is what it writes
 * to `stdout`/`stderr` here, then what it returns (a string or bytes as they are, anything
 * else as JSON) appended to stdout; a throw is reason `exit` code 1 with the error on stderr.
 */
export interface InProcessContext {
  /** The arguments after the file in the `run` block. */
  args: readonly string[];
  /** The env the host passed (the code can read `process.env` too: it is trusted code in this process). */
  env: Readonly<Record<string, string>>;
  /** What the host passed as `stdin`, whole. */
  stdin: Buffer;
  /** Aborted at `timeout_ms` and when the host's signal fires. */
  signal: AbortSignal;
  /** The run's stdout: what is written here is the outcome's `stdout`. */
  stdout: { write(chunk: string | Uint8Array): void };
  /** The run's stderr. */
  stderr: { write(chunk: string | Uint8Array): void };
}

/** In this process nothing can be stopped: the timeout is reported, and the code is told by its signal. */
export const IN_PROCESS_ENFORCEMENT: Enforcement = {
  memory_mb: 'unenforced',
  timeout_ms: 'unenforced',
  cpu_ms: 'unenforced',
};

const NODE_MODULE = /\.(js|mjs|cjs)$/;

/**
 * The `in-process` engine (trusted origins only; `resolveForOrigin` downgraded the others):
 * the bundle extracted into a fresh folder, its `run` file imported with `import()` and its
 * default export, when a function, awaited. At `timeout_ms` the run returns reason
 * `timeout` and aborts `context.signal`, but the code keeps running if it ignores it.
 */
export async function runInProcess(
  handle: ResolvedRunnerHandle,
  request: RunnerRequest,
  options: LocalRunOptions,
): Promise<Omit<RunOutcome, 'engine' | 'downgraded'>> {
  const work = await mkdtemp(join(options.workDir ?? tmpdir(), 'agentproto-run-'));
  const started = performance.now();
  try {
    const bundleDir = join(work, 'bundle');
    const command = resolveRun(request.run, bundleDir);
    const file = command.file;
    if (command.form !== 'file' || file === undefined || command.cmd !== 'node' || !NODE_MODULE.test(file))
      throw new RunnerEngineError(
        'in-process',
        JSON.stringify(request.run),
        'only a node module file (.js, .mjs, .cjs) can be imported in-process',
      );
    const { files } = await extractTarGz(request.bundle, bundleDir, {
      maxBytes: options.maxBytes ?? 256 * 1024 * 1024,
      maxFiles: options.maxFiles ?? 100_000,
    });
    assertRunFileInBundle(request.run, files);
    const out = collector(options.maxOutputBytes);
    const err = collector(options.maxOutputBytes);
    const controller = new AbortController();
    const context: InProcessContext = {
      args: command.args.slice(1),
      env: { ...(request.env ?? {}) },
      stdin: Buffer.from(request.stdin ?? ''),
      signal: controller.signal,
      stdout: { write: out.write },
      stderr: { write: err.write },
    };
    const target = command.args[0] as string;
    const body = (async (): Promise<ExitReason> => {
      try {
        const module = (await import(pathToFileURL(target).href)) as { default?: unknown };
        if (typeof module.default === 'function') {
          const value: unknown = await module.default(context);
          if (typeof value === 'string' || value instanceof Uint8Array) out.write(value);
          else if (value !== undefined) out.write(JSON.stringify(value));
        }
        return { kind: 'exit', code: 0 };
      } catch (error) {
        err.write(error instanceof Error ? (error.stack ?? error.message) : String(error));
        return { kind: 'exit', code: 1 };
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<ExitReason>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'timeout' }), handle.limits.timeout_ms);
      onAbort = () => resolve({ kind: 'aborted' });
      if (request.signal?.aborted) onAbort();
      else request.signal?.addEventListener('abort', onAbort, { once: true });
    });
    const reason = await Promise.race([body, stopped]);
    clearTimeout(timer);
    if (onAbort) request.signal?.removeEventListener('abort', onAbort);
    if (reason.kind === 'timeout' || reason.kind === 'aborted') controller.abort(new Error(`run ${reason.kind}`));
    return {
      reason,
      stdout: out.bytes(),
      stderr: err.bytes(),
      durationMs: performance.now() - started,
      enforcement: IN_PROCESS_ENFORCEMENT,
    };
  } finally {
    // The imported module stays loaded; its files are no longer needed.
    await rm(work, { recursive: true, force: true });
  }
}

function collector(max = 8 * 1024 * 1024): { write(chunk: string | Uint8Array): void; bytes(): Buffer } {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    write(chunk) {
      if (size >= max) return;
      const buffer = Buffer.from(chunk).subarray(0, max - size);
      chunks.push(buffer);
      size += buffer.length;
    },
    bytes: () => Buffer.concat(chunks),
  };
}
