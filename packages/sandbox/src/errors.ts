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
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${field} ${JSON.stringify(value)}: ${problem}`, options);
    this.name = 'SandboxSpecError';
  }
}

/** An egress host entry that is not `host` or `host:port`. */
export class EgressHostError extends Error {
  readonly code = 'SANDBOX_EGRESS_HOST_INVALID';
  constructor(
    readonly host: string,
    readonly problem: string,
  ) {
    super(`egress host ${JSON.stringify(host)}: ${problem}`);
    this.name = 'EgressHostError';
  }
}
