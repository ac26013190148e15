import {
  GitAuthFailedError,
  GitCommitUnavailableError,
  type GitError,
  GitHostKeyError,
  GitRepositoryNotFoundError,
  GitTransportError,
} from '../errors.js';
import { redact } from '../redact.js';

/** How much of a command's stderr a cause keeps: enough to debug, not a server's whole page. */
const STDERR_LIMIT = 4096;

/**
 * What a failed git command said, as the cause of the GitError it became: the git
 * subcommand, its exit code and its stderr, scrubbed of every secret of the request (a
 * server may echo a header back in its `remote:` lines). Never the environment, never the
 * full argv (which holds paths only, but is noise).
 */
export class GitCommandError extends Error {
  constructor(
    readonly command: string,
    readonly exitCode: number,
    readonly stderr: string,
  ) {
    super(`git ${command} exited with ${exitCode}${stderr === '' ? '' : `: ${stderr}`}`);
    this.name = 'GitCommandError';
  }
}

export interface FailureContext {
  url: string;
  /** The git subcommand (`fetch`, `ls-remote`, …), for the cause. */
  command: string;
  /** For a fetch of one commit: a server refusing the id means the commit is unavailable. */
  commit?: string;
  secrets: readonly string[];
}

/**
 * A failed network command as a GitError, recognized by git's and ssh's messages (the
 * children run with LC_ALL=C, so they are in English):
 *
 * | stderr | error |
 * | --- | --- |
 * | `Host key verification failed`, no host key known, host identification changed | GitHostKeyError |
 * | `Permission denied (publickey…)` | GitAuthFailedError, no status |
 * | HTTP 401, `could not read Username` (the server asked for credentials, git had none to add) | GitAuthFailedError 401 |
 * | HTTP 403 | GitAuthFailedError 403 |
 * | `repository '…' not found`, HTTP 404, `does not appear to be a git repository` | GitRepositoryNotFoundError |
 * | `not our ref`, `couldn't find remote ref` (fetching a commit) | GitCommitUnavailableError |
 * | anything else | GitTransportError with git's last `fatal:` line |
 */
export function commandFailure(stderrBytes: Buffer, exitCode: number, context: FailureContext): GitError {
  const full = redact(stderrBytes.toString('utf8'), context.secrets);
  const stderr = full.length > STDERR_LIMIT ? `${full.slice(0, STDERR_LIMIT)}…` : full;
  const cause = new GitCommandError(context.command, exitCode, stderr.trim());
  const { url } = context;
  if (/Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No \S+ host key is known for/.test(full)) {
    return new GitHostKeyError(url, cause);
  }
  if (/Permission denied \((?:publickey|[^)]*publickey)[^)]*\)/.test(full))
    return new GitAuthFailedError(url, undefined, cause);
  if (/returned error: 403\b/.test(full)) return new GitAuthFailedError(url, 403, cause);
  if (/returned error: 401\b|could not read (?:Username|Password)|Authentication failed for/.test(full)) {
    return new GitAuthFailedError(url, 401, cause);
  }
  if (
    /repository '[^']*' not found|returned error: 404\b|does not appear to be a git repository|Repository not found/i.test(
      full,
    )
  ) {
    return new GitRepositoryNotFoundError(url, cause);
  }
  if (
    context.commit !== undefined &&
    /not our ref|couldn't find remote ref|no such remote ref|unadvertised object/.test(full)
  ) {
    return new GitCommitUnavailableError(url, context.commit);
  }
  return new GitTransportError(url, reasonOf(full, context.command, exitCode), undefined, cause);
}

/** git's last `fatal:` (or `error:`) line, short; the exit code when it printed none. */
function reasonOf(stderr: string, command: string, exitCode: number): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const last = [...lines].reverse().find((line) => /^(fatal|error):/.test(line)) ?? lines[lines.length - 1];
  if (last === undefined) return `git ${command} exited with ${exitCode}`;
  const reason = last.replace(/^(fatal|error):\s*/, '');
  return reason.length > 300 ? `${reason.slice(0, 300)}…` : reason;
}
