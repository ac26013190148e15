/**
 * Where acquisition runs, and everything it may do there. The core and the providers go
 * through this object for every command, credential file and private folder, so a host
 * that acquires inside a container or a VM implements these five members and nothing else.
 */
export interface Sandbox {
  /** For messages: `local`, `container:abc`, … */
  readonly name: string;
  /** Transports available here. A sandbox without `ssh` refuses SSH sources: there is no fallback. */
  readonly capabilities: SandboxCapabilities;
  /**
   * Runs `argv` (no shell) with exactly `env` as its environment: nothing of the host's own
   * environment is added. Resolves with the exit code, also when it is not 0; rejects only
   * when the program cannot be started or `signal` fires (then the process is killed).
   */
  run(argv: readonly string[], options: RunOptions): Promise<RunResult>;
  /** Writes a file with exactly `mode`, creating it: an existing file is an error. */
  writeFile(path: string, data: string | Uint8Array, options: { mode: number }): Promise<void>;
  /** Makes a fresh, unique folder that only the sandbox's account can read (0700), outside any workspace. */
  makePrivateDir(): Promise<string>;
  /** Removes a folder made by makePrivateDir and everything in it; rejects when it cannot. */
  removePrivateDir(path: string): Promise<void>;
  /**
   * Removes the private folders that processes killed before their cleanup left behind,
   * never one whose owner still runs; returns how many. Called by the core before every
   * preparation. Optional: a sandbox whose private folders die with it (a container
   * discarded after use) has nothing to sweep.
   */
  sweepPrivateDirs?(): Promise<number>;
  /**
   * Called with a provider's `egressHosts` before it resolves an entry: a sandbox with a
   * network boundary opens exactly these hosts (or rejects, and the entry fails). Optional:
   * localSandbox has no boundary of its own.
   */
  allowEgress?(hosts: readonly string[], signal: AbortSignal): Promise<void>;
}

export interface SandboxCapabilities {
  /** Git over HTTPS (always possible: without a `git` binary the pure JavaScript engine runs in the host). */
  https: boolean;
  /** Git over SSH: needs `git` and `ssh` in the sandbox. */
  ssh: boolean;
  /** A `git` binary runs here: partial clone and sparse fetches; otherwise isomorphic-git fetches whole commits. */
  git: boolean;
  /**
   * The sandbox is this machine and this process's account (localSandbox): a provider may
   * do small network exchanges in-process (a ref listing) instead of starting a program.
   */
  inProcess?: boolean;
}

export interface RunOptions {
  env: Readonly<Record<string, string>>;
  cwd?: string;
  /** Written to the child's standard input, which is then closed. */
  stdin?: string | Uint8Array;
  signal?: AbortSignal;
}

export interface RunResult {
  code: number;
  stdout: Buffer;
  stderr: Buffer;
}
