/** Why isolation cannot be had on this machine; each is a fact about the machine, not the command. */
export type SandboxUnavailableReason =
  /** Not Linux: bubblewrap needs Linux namespaces. */
  | 'not-linux'
  /** No `bwrap` program (Debian package `bubblewrap`). */
  | 'bwrap-missing'
  /** bwrap runs but the kernel refused it new namespaces (user namespaces off, a container's seccomp or limits). */
  | 'namespaces-refused'
  /** No `socat` program (Debian package `socat`): a sandbox that may reach granted hosts needs it. */
  | 'socat-missing';

/**
 * Isolation cannot be had here. Thrown before anything runs, never replaced by a run
 * without isolation: a host that wants to run anyway must choose another runner itself.
 */
export class SandboxUnavailableError extends Error {
  readonly code = 'SANDBOX_UNAVAILABLE';
  constructor(
    /** Which fact of the machine stands in the way. */
    readonly reason: SandboxUnavailableReason,
    /** What the check saw: bwrap's own message, or the program that was looked for. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${MESSAGES[reason]}: ${detail}`, options);
    this.name = 'SandboxUnavailableError';
  }
}

const MESSAGES: Record<SandboxUnavailableReason, string> = {
  'not-linux': 'isolation needs Linux (bubblewrap and namespaces)',
  'bwrap-missing': 'bubblewrap is not installed (Debian: apt-get install bubblewrap)',
  'namespaces-refused': 'bubblewrap cannot create namespaces on this machine (user namespaces disabled or refused)',
  'socat-missing': 'socat is not installed (Debian: apt-get install socat); a sandbox with granted hosts needs it',
};

/** What a sandboxed command was given that cannot be honoured: a relative or missing folder, a reserved target. */
export class SandboxSpecError extends Error {
  readonly code = 'SANDBOX_SPEC_INVALID';
  constructor(
    /** The offending field: `mounts[2].source`, `argv[0]`, `cwd`, … */
    readonly field: string,
    /** The offending value (a path or a program name; never an environment value). */
    readonly value: string,
    /** What is wrong with it. */
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${field} ${JSON.stringify(value)}: ${problem}`, options);
    this.name = 'SandboxSpecError';
  }
}

/**
 * bubblewrap could not set the sandbox up, so the command never ran: a mount it refused, a
 * program it could not start, or the egress bridge that did not come up. Never reported as
 * the command's exit status.
 */
export class SandboxSetupError extends Error {
  readonly code = 'SANDBOX_SETUP_FAILED';
  constructor(
    /** The program the sandbox was to run (`argv[0]`). */
    readonly program: string,
    /** What bubblewrap said (`bwrap: Can't find source path /x: …`), or which step did not come up. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`sandbox for ${JSON.stringify(program)} could not be set up: ${detail}`, options);
    this.name = 'SandboxSetupError';
  }
}

/** An egress host entry that is not `host` or `host:port`. */
export class EgressHostError extends Error {
  readonly code = 'SANDBOX_EGRESS_HOST_INVALID';
  constructor(
    /** The entry as given. */
    readonly host: string,
    /** What is wrong with it. */
    readonly problem: string,
  ) {
    super(`egress host ${JSON.stringify(host)}: ${problem}`);
    this.name = 'EgressHostError';
  }
}
