import { isFullCommitId } from './commit-id.js';
import { GitTransportError, quote } from './errors.js';
import { refNameProblem } from './ref-name.js';

/** One line of `git ls-remote`, with its `^{}` line folded in. */
export interface RemoteRef {
  /** `HEAD`, `refs/heads/main`, `refs/tags/v1`, … */
  name: string;
  /** What the ref points at: for an annotated tag, the tag object's id. */
  oid: string;
  /** For an annotated tag: the object it finally points at (the `^{}` line), normally a commit. */
  peeled?: string;
  /** For a symbolic ref (HEAD): the ref it points to, e.g. `refs/heads/main`. */
  symref?: string;
}

/** A remote's refs, as listRefs returns them; resolveRef reads them without a network. */
export interface RemoteRefs {
  /** The normalized URL they were listed from (no credentials: those are refused). */
  url: string;
  /** In the server's order (HEAD first, then by name, for git servers). */
  refs: readonly RemoteRef[];
}

/**
 * An engine's answer checked before anyone relies on it: ref names as git allows them, ids
 * as 40 lower-case hex digits, no name twice. A server that sends anything else is not
 * speaking git, and a name like `refs/heads/../../x` must never reach a caller.
 */
export function checkServerRefs(url: string, refs: readonly RemoteRef[]): RemoteRefs {
  const seen = new Set<string>();
  const checked: RemoteRef[] = [];
  for (const ref of refs) {
    const problem = ref.name === 'HEAD' ? undefined : refNameProblem(ref.name, { strict: false });
    if (problem !== undefined || !ref.name.startsWith(ref.name === 'HEAD' ? 'HEAD' : 'refs/')) {
      throw new GitTransportError(url, `the server listed a malformed ref name ${quote(String(ref.name))}`);
    }
    if (seen.has(ref.name)) throw new GitTransportError(url, `the server listed ${quote(ref.name)} twice`);
    seen.add(ref.name);
    for (const id of [ref.oid, ...(ref.peeled === undefined ? [] : [ref.peeled])]) {
      if (!isFullCommitId(id))
        throw new GitTransportError(url, `the server listed ${quote(ref.name)} with a malformed id`);
    }
    if (ref.symref !== undefined && refNameProblem(ref.symref, { strict: false }) !== undefined) {
      throw new GitTransportError(url, `the server listed ${quote(ref.name)} with a malformed symref target`);
    }
    checked.push({
      name: ref.name,
      oid: ref.oid,
      ...(ref.peeled === undefined ? {} : { peeled: ref.peeled }),
      ...(ref.symref === undefined ? {} : { symref: ref.symref }),
    });
  }
  return { url, refs: checked };
}
