import { constants } from 'node:fs';
import { type FileHandle, mkdir, open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makePrivateDir, removePrivateDir } from '@agentproto/content-cache';
import { type EgressProxy, type IsolatedProcess, SandboxSetupError, spawnIsolated } from '@agentproto/sandbox';

/** Where a session's folders are seen inside its sandbox. */
const ROOT = '/run/agentproto-session';
/** Read-only inside: the commands the host writes, one script (and its input) each. */
const CONTROL = `${ROOT}/control`;
/** Writable inside: a command's output until the supervisor has sent it. */
const SCRATCH = `${ROOT}/scratch`;

/** One command of a session: as Sandbox.run takes it. */
export interface SessionCommand {
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string | undefined;
  stdin?: string | Uint8Array | undefined;
}

/** How a command of a session ended. */
export type SessionOutcome =
  | { kind: 'done'; code: number; stdout: Buffer; stderr: Buffer }
  /** The program could not be started (`what`: its working folder or the program itself). */
  | { kind: 'not-started'; what: 'cwd' | 'program'; stderr: Buffer }
  /** The session ended before this command was given to it: nothing of it ran. */
  | { kind: 'gone' };

/**
 * Whether a command can go through a session: its environment must be written as shell
 * `export`s (names that are shell identifiers) and hold no NUL; anything else runs on its own.
 */
export function sessionCanRun(command: SessionCommand): boolean {
  if (command.argv.length === 0 || command.argv.some((arg) => typeof arg !== 'string' || arg.includes('\0')))
    return false;
  if (command.argv[0] === '') return false;
  if (command.cwd?.includes('\0')) return false;
  return Object.entries(command.env).every(
    ([name, value]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && typeof value === 'string' && !value.includes('\0'),
  );
}

/**
 * The supervisor, run by /bin/sh inside the sandbox: it reads a command number per line
 * from its standard input, runs that command's script (written by the host into the
 * read-only control folder) in a subshell with standard output, error and the start
 * report (fd 3) redirected to files of the scratch folder named after the number, and once
 * the command has exited writes `done <n> <status>\n` to its standard output. One command
 * at a time; it ends at the end of its input. Per command it starts no program but the
 * command's own (a fork, then the command's exec).
 */
const SUPERVISOR = [
  `C=${CONTROL} T=${SCRATCH}`,
  'while IFS= read -r n; do',
  "  case $n in ''|*[!0-9]*) exit 2 ;; esac",
  '  ( . "$C/$n.sh" ) >"$T/$n.o" 2>"$T/$n.e" 3>"$T/$n.s" </dev/null &',
  '  wait "$!"',
  `  printf 'done %s %s\n' "$n" "$?"`,
  'done',
].join('\n');

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * The script of one command: its standard input, working folder and exactly its
 * environment (exported on top of the supervisor's, which holds only PWD), then the
 * program, checked first so that one that cannot start is told apart from its exit status.
 */
function script(command: SessionCommand, stdinPath: string | undefined): string {
  const [program, ...args] = command.argv as [string, ...string[]];
  const lines = [
    `exec <${stdinPath === undefined ? '/dev/null' : quote(stdinPath)}`,
    `cd -- ${quote(command.cwd ?? '/')} 2>/dev/null || { echo cwd >&3; exit 127; }`,
    // cd exports OLDPWD; the command gets only PWD besides its own.
    'unset OLDPWD',
    ...Object.entries(command.env).map(([name, value]) => `export ${quote(`${name}=${value}`)}`),
    program.includes('/')
      ? `[ -f ${quote(program)} ] && [ -x ${quote(program)} ] || { echo program >&3; exit 127; }`
      : `command -v -- ${quote(program)} >/dev/null 2>&1 || { echo program >&3; exit 127; }`,
    `exec ${[program, ...args].map(quote).join(' ')} 3>&-`,
  ];
  return `${lines.join('\n')}\n`;
}

interface Pending {
  id: number;
  /**
   * With the command's exit status; `ended` when the session ended first, `gone` when it
   * never started (bwrap could not set it up: nothing of the command ran).
   */
  resolve(status: number | 'ended' | 'gone'): void;
}

/**
 * The sandbox ended under a running command (killed from outside, or its supervisor broke
 * the protocol): reported as a command killed by SIGKILL, as a lone one would be.
 */
function ended(): SessionOutcome {
  return {
    kind: 'done',
    code: 128 + 9,
    stdout: Buffer.alloc(0),
    stderr: Buffer.from('sandbox: the sandbox ended before the command did\n'),
  };
}

/**
 * A file the supervisor wrote in the scratch folder, which the sandbox can change: read
 * only if it is still a regular file (never through a link, never blocking on a FIFO).
 */
async function readOutput(path: string): Promise<Buffer | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    return (await handle.stat()).isFile() ? await handle.readFile() : undefined;
  } finally {
    await handle.close();
  }
}

/**
 * One sandbox (one bwrap, one set of namespaces, one egress bridge) that runs the commands
 * of one entry, one after another: a command costs the start of its own program, not of a
 * sandbox. It sees the entry's private folder, read-write at its own path, and the
 * session's two folders; nothing else but the system folders. The egress bridge, if any,
 * is the one the session started with.
 */
export class BubblewrapSession {
  /** The egress proxy its bridge reaches, or undefined: no network at all. */
  readonly egress: EgressProxy | undefined;
  private readonly child: IsolatedProcess;
  private queue: Promise<unknown> = Promise.resolve();
  private pending: Pending | undefined;
  /** The supervisor's output not yet parsed: at most one incomplete line. */
  private head = '';
  private next = 0;
  private ended = false;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly folder: string,
    workDir: string,
    egress: EgressProxy | undefined,
    runAs: { uid: number; gid: number },
  ) {
    this.egress = egress;
    this.child = spawnIsolated({
      argv: ['/bin/sh', '-c', SUPERVISOR],
      mounts: [
        { source: workDir, target: workDir, writable: true },
        { source: join(folder, 'control'), target: CONTROL },
        { source: join(folder, 'scratch'), target: SCRATCH, writable: true },
      ],
      runAs,
      ...(egress === undefined ? {} : { egress }),
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.received(chunk));
    this.child.stderr.resume();
    this.child.stdin.on('error', () => undefined);
    this.exited = this.child.exited.then(
      () => this.end('ended'),
      (error: unknown) => this.end(error instanceof SandboxSetupError ? 'gone' : 'ended'),
    );
  }

  /** Starts a session for the entry whose private folder is `workDir`; its own folders go under `privateRoot`. */
  static async start(options: {
    privateRoot: string;
    workDir: string;
    egress: EgressProxy | undefined;
    runAs: { uid: number; gid: number };
  }): Promise<BubblewrapSession> {
    const folder = await makePrivateDir(options.privateRoot);
    try {
      await mkdir(join(folder, 'control'), { mode: 0o700 });
      await mkdir(join(folder, 'scratch'), { mode: 0o700 });
      return new BubblewrapSession(folder, options.workDir, options.egress, options.runAs);
    } catch (error) {
      await removePrivateDir(folder).catch(() => undefined);
      throw error;
    }
  }

  /** Whether commands can still be given to it. */
  get alive(): boolean {
    return !this.ended;
  }

  /**
   * Runs one command once those before it are done. Aborting it kills the whole session
   * (the only command running in it is this one): it rejects with the signal's reason.
   */
  run(command: SessionCommand, signal?: AbortSignal): Promise<SessionOutcome> {
    const turn = this.queue.then(() => this.runNow(command, signal));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private async runNow(command: SessionCommand, signal: AbortSignal | undefined): Promise<SessionOutcome> {
    if (signal?.aborted) throw signal.reason;
    if (this.ended) return { kind: 'gone' };
    const id = ++this.next;
    const control = join(this.folder, 'control');
    const scratch = join(this.folder, 'scratch');
    const stdinPath = command.stdin === undefined ? undefined : join(control, `${id}.in`);
    const scriptPath = join(control, `${id}.sh`);
    const outputs = ['o', 'e', 's'].map((suffix) => join(scratch, `${id}.${suffix}`)) as [string, string, string];
    const onAbort = () => this.kill();
    try {
      // The control folder is read-only inside the sandbox: nothing there can replace these files.
      if (stdinPath !== undefined)
        await writeFile(stdinPath, command.stdin as string | Uint8Array, { flag: 'wx', mode: 0o600 });
      await writeFile(scriptPath, script(command, stdinPath === undefined ? undefined : `${CONTROL}/${id}.in`), {
        flag: 'wx',
        mode: 0o600,
      });
      if (this.ended) return { kind: 'gone' };
      const status = new Promise<number | 'ended' | 'gone'>((resolve) => {
        this.pending = { id, resolve };
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.child.stdin.write(`${id}\n`);
      const code = await status;
      if (signal?.aborted) throw signal.reason;
      if (code === 'gone') return { kind: 'gone' };
      if (code === 'ended') return ended();
      const [stdout, stderr, report] = await Promise.all(outputs.map(readOutput));
      if (stdout === undefined || stderr === undefined || report === undefined) {
        // Not the files the supervisor made: something in the sandbox replaced them.
        this.kill();
        return ended();
      }
      const what = report.toString('latin1').trim();
      if (what === 'cwd' || what === 'program') return { kind: 'not-started', what, stderr };
      return { kind: 'done', code, stdout, stderr };
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.pending = undefined;
      await Promise.all(
        [scriptPath, ...(stdinPath === undefined ? [] : [stdinPath]), ...outputs].map((path) =>
          // Whatever the sandbox left at an output's name (a folder, a link) goes; a link is not followed.
          rm(path, { force: true, recursive: true }).catch(() => undefined),
        ),
      );
    }
  }

  /** Parses the supervisor's lines; anything that is not the record of the running command ends the session. */
  private received(chunk: Buffer): void {
    this.head += chunk.toString('latin1');
    for (let newline = this.head.indexOf('\n'); newline !== -1; newline = this.head.indexOf('\n')) {
      const line = this.head.slice(0, newline);
      this.head = this.head.slice(newline + 1);
      const match = /^done (\d+) (\d+)$/.exec(line);
      const pending = this.pending;
      if (match === null || pending === undefined || Number(match[1]) !== pending.id) {
        this.kill();
        return;
      }
      this.pending = undefined;
      pending.resolve(Number(match[2]));
    }
    if (this.head.length > 256) this.kill();
  }

  private end(why: 'ended' | 'gone'): void {
    this.ended = true;
    const pending = this.pending;
    this.pending = undefined;
    pending?.resolve(why);
  }

  /** Kills every process of the session. */
  kill(): void {
    this.ended = true;
    this.child.kill();
  }

  /** Ends the session (every process of it) and removes its folders. */
  async close(): Promise<void> {
    this.kill();
    await this.exited;
    await removePrivateDir(this.folder);
  }
}
