import { spawn } from 'node:child_process';
import { CommandFailedError } from './run.js';

/** Writes a fast-import stream into a running `git fast-import`, a megabyte at a time. */
export interface FastImportWriter {
  text(text: string): Promise<void>;
  bytes(bytes: Uint8Array): Promise<void>;
}

const FLUSH_BYTES = 1 << 20;

/**
 * Runs `git fast-import` on `gitDir` and feeds it what `write` produces: one process for
 * all trees, commits, branches and tags of a repository rather than a git call each.
 * Resolves with fast-import's stdout (the answers to `get-mark`).
 */
export async function fastImport(
  gitDir: string,
  env: NodeJS.ProcessEnv,
  write: (writer: FastImportWriter) => Promise<void>,
): Promise<string> {
  const args = ['fast-import', '--quiet', '--done', '--date-format=raw'];
  const child = spawn('git', args, { env: { ...env, GIT_DIR: gitDir }, stdio: ['pipe', 'pipe', 'pipe'] });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  // If fast-import dies mid-stream, the exit code and stderr explain it; the EPIPE does not.
  child.stdin.on('error', () => {});

  let pieces: Uint8Array[] = [];
  let pending = 0;
  const flush = async () => {
    if (pending === 0) return;
    const chunk = Buffer.concat(pieces, pending);
    pieces = [];
    pending = 0;
    if (!child.stdin.write(chunk)) await drainedOrExited(child.stdin, exited);
  };
  const push = async (piece: Uint8Array) => {
    pieces.push(piece);
    pending += piece.length;
    if (pending >= FLUSH_BYTES) await flush();
  };

  try {
    await write({ text: (text) => push(Buffer.from(text, 'utf8')), bytes: push });
    await push(Buffer.from('done\n'));
    await flush();
  } catch (error) {
    // The caller deletes the repository next; fast-import must not be writing into it then.
    child.kill('SIGKILL');
    await exited.catch(() => {});
    throw error;
  }
  child.stdin.end();
  const code = await exited;
  const out = Buffer.concat(stdout).toString('utf8');
  if (code !== 0) {
    throw new CommandFailedError(`git ${args.join(' ')}`, code, null, out, Buffer.concat(stderr).toString('utf8'));
  }
  return out;
}

function drainedOrExited(stdin: NodeJS.WritableStream, exited: Promise<unknown>): Promise<void> {
  return Promise.race([new Promise<void>((resolve) => stdin.once('drain', () => resolve())), exited.then(() => {})]);
}

/**
 * A path as fast-import reads it: verbatim unless it starts with `"` or holds a newline,
 * then C-quoted. (Spaces need no quoting: the path is the rest of the line.)
 */
export function fastImportPath(path: string): string {
  if (!path.startsWith('"') && !path.includes('\n')) return path;
  return `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** `data <n>` followed by exactly n bytes: the only framing fast-import needs for any content. */
export async function writeData(writer: FastImportWriter, data: Uint8Array): Promise<void> {
  await writer.text(`data ${data.length}\n`);
  await writer.bytes(data);
  await writer.text('\n');
}
