import type { IsolatedCommand, IsolatedExit } from './spawn.js';
import { spawnIsolated } from './spawn.js';

/** `spawnIsolated`'s command, with standard input and an output bound. */
export interface RunIsolatedOptions extends IsolatedCommand {
  /** Written to standard input, which is then closed. Default: closed at once. */
  stdin?: string | Uint8Array;
  /** Most bytes kept of each of stdout and stderr; the rest is read and dropped. Default 8 MiB. */
  maxOutputBytes?: number;
}

/** How the command ended, with what it wrote. */
export interface IsolatedResult extends IsolatedExit {
  /** Standard output, up to `maxOutputBytes`. */
  stdout: Buffer;
  /** Standard error, up to `maxOutputBytes`. */
  stderr: Buffer;
}

/**
 * `spawnIsolated`, waited for: standard input written and closed, output gathered up to a
 * bound, settled once nothing of the sandbox is left.
 *
 * @example
 * ```ts
 * import { runIsolated } from '@agentproto/sandbox';
 *
 * const { reason, stdout } = await runIsolated({ argv: ['/usr/bin/id', '-u'], timeoutMs: 5000 });
 * ```
 *
 * @throws {SandboxUnavailableError} `SANDBOX_UNAVAILABLE`: this machine cannot isolate.
 * @throws {SandboxSpecError} `SANDBOX_SPEC_INVALID`: a mount, the working folder or an environment name cannot be honoured.
 * @throws {SandboxSetupError} `SANDBOX_SETUP_FAILED`: bwrap could not set the sandbox up; the command never ran.
 */
export async function runIsolated(options: RunIsolatedOptions): Promise<IsolatedResult> {
  const child = spawnIsolated(options);
  const max = options.maxOutputBytes ?? 8 * 1024 * 1024;
  const stdout = collect(child.stdout, max);
  const stderr = collect(child.stderr, max);
  child.stdin.end(options.stdin ?? '');
  const exit = await child.exited;
  return { ...exit, stdout: stdout(), stderr: stderr() };
}

function collect(stream: NodeJS.ReadableStream, max: number): () => Buffer {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('data', (chunk: Buffer) => {
    if (size >= max) return;
    chunks.push(chunk.subarray(0, max - size));
    size += Math.min(chunk.length, max - size);
  });
  return () => Buffer.concat(chunks);
}
