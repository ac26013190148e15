// One class per failure of the host, each with a stable `code` and its facts as fields, so a
// caller branches on `code` and messages stay for humans. Errors of @agentproto/aip-26
// (AIP26_SOURCE_UNRESOLVED, AIP26_RUN_FILE_MISSING, …) pass through unchanged; the ones a
// registration finds are collected into ToolRefusedError's `problems` instead.

/** One thing wrong with a manifest, attributed to the place in it that caused it. */
export interface RegistrationProblem {
  /** The failure's stable code: AIP26_MANIFEST_INVALID, AIP26_SOURCE_UNRESOLVED, TOOL_NAME_INVALID, … */
  code: string;
  /** JSON pointer (RFC 6901) into the manifest: `/code/sources/2`, `/run`, `/name`. */
  pointer: string;
  /** For a source: its label, `sources[2]`, with the chain of `ref`s that led to it. */
  source?: string;
  /** The stable sub-reason of the code, when it has one (`unsafe-path`, `ref-unresolved`, …). */
  reason?: string;
  message: string;
}

/** The manifest was refused at registration; nothing was recorded and nothing ran. */
export class ToolRefusedError extends Error {
  readonly code = 'TOOL_REFUSED';
  constructor(
    /** The manifest's name, when it has a usable one. */
    readonly tool: string | undefined,
    readonly problems: readonly RegistrationProblem[],
  ) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    super(
      `tool ${tool === undefined ? '(unnamed)' : JSON.stringify(tool)} refused (${count}): ${problems.map((p) => `${p.pointer || '/'} ${p.code}`).join('; ')}`,
    );
    this.name = 'ToolRefusedError';
  }
}

/** `run` named a tool the registry does not hold. */
export class ToolNotRegisteredError extends Error {
  readonly code = 'TOOL_NOT_REGISTERED';
  constructor(readonly tool: string) {
    super(`no tool ${JSON.stringify(tool)} is registered`);
    this.name = 'ToolNotRegisteredError';
  }
}

/**
 * A github source resolved to another commit at run time than at registration. Only
 * possible for a source reached through a `ref` code-workspace: the host pins the manifest's
 * own github sources to their registered commits. Nothing ran; register the tool again to
 * accept the new commit.
 */
export class ToolSourceMovedError extends Error {
  readonly code = 'TOOL_SOURCE_MOVED';
  constructor(
    readonly tool: string,
    readonly source: string,
    readonly registered: string,
    readonly resolved: string | undefined,
  ) {
    super(
      `tool ${JSON.stringify(tool)}: ${source} was registered at ${registered} but now resolves to ${resolved ?? 'nothing'}; register the tool again to accept it`,
    );
    this.name = 'ToolSourceMovedError';
  }
}

/** The registry file exists but is not one this host wrote. */
export class RegistryCorruptError extends Error {
  readonly code = 'TOOL_REGISTRY_CORRUPT';
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: not a tool registry (${detail})`);
    this.name = 'RegistryCorruptError';
  }
}
