import { isFullCommitId, isUppercaseCommitId, looksAbbreviated } from './commit-id.js';
import {
  GitAbbreviatedShaError,
  GitAmbiguousRefError,
  GitInvalidRefNameError,
  GitRefNotFoundError,
  GitUppercaseShaError,
} from './errors.js';
import { assertRefName } from './ref-name.js';
import type { RemoteRef, RemoteRefs } from './remote-refs.js';

export type RefKind = 'commit' | 'branch' | 'tag' | 'head';

export interface ResolvedRef {
  /** The full ref name it resolved through (`refs/heads/main`, `refs/tags/v1`, `HEAD`), or the commit id itself. */
  ref: string;
  /** The commit, 40 lower-case hex digits; for an annotated tag its peeled commit, never the tag object. */
  commit: string;
  kind: RefKind;
  /** For `HEAD`: the branch it points to, when the server says. */
  target?: string;
}

/**
 * Resolves a name against a remote's refs, as `git ls-remote` shows them. Pure: no network.
 *
 * | name | result |
 * | --- | --- |
 * | 40 lower-case hex digits | that commit, as is (kind `commit`) |
 * | 40 hex digits with upper case | GitUppercaseShaError |
 * | `HEAD` | followed to the commit it points at (kind `head`) |
 * | `refs/heads/X`, `refs/tags/X` | exactly that ref |
 * | other `refs/…` | GitInvalidRefNameError: only branches and tags are named in full |
 * | `X` | `refs/heads/X` or `refs/tags/X`; both exist → GitAmbiguousRefError |
 * | 4–39 hex digits, no such ref | GitAbbreviatedShaError |
 * | nothing matches | GitRefNotFoundError |
 *
 * Every name is checked against git-check-ref-format first.
 */
export function resolveRef(refs: RemoteRefs, name: string): ResolvedRef {
  if (typeof name === 'string' && isFullCommitId(name)) return { ref: name, commit: name, kind: 'commit' };
  if (typeof name === 'string' && isUppercaseCommitId(name)) throw new GitUppercaseShaError(name);
  assertRefName(name);
  const byName = new Map(refs.refs.map((ref) => [ref.name, ref]));

  if (name === 'HEAD') return resolveHead(refs, byName);
  if (name.startsWith('refs/')) {
    if (!name.startsWith('refs/heads/') && !name.startsWith('refs/tags/')) {
      throw new GitInvalidRefNameError(
        name,
        'only branches (refs/heads/…) and tags (refs/tags/…) can be named in full',
      );
    }
    const ref = byName.get(name);
    if (!ref) throw new GitRefNotFoundError(name, refs.url, [name]);
    return fromRef(ref);
  }

  const candidates = [`refs/heads/${name}`, `refs/tags/${name}`];
  const found = candidates.flatMap((full) => byName.get(full) ?? []);
  // git would pick one by its own precedence (tags before heads) with only a warning; the
  // two usually mean different commits, so the caller must say which one.
  if (found.length > 1)
    throw new GitAmbiguousRefError(
      name,
      found.map((ref) => ref.name),
      refs.url,
    );
  const [ref] = found;
  if (ref) return fromRef(ref);
  // Refs win over abbreviations, as in git: `cafe1234` may well be a branch. Only when no
  // ref has the name does a hex string get the more useful error.
  if (looksAbbreviated(name)) throw new GitAbbreviatedShaError(name);
  throw new GitRefNotFoundError(name, refs.url, candidates);
}

function resolveHead(refs: RemoteRefs, byName: ReadonlyMap<string, RemoteRef>): ResolvedRef {
  const head = byName.get('HEAD');
  if (!head) throw new GitRefNotFoundError('HEAD', refs.url, ['HEAD']);
  // Prefer the target's own line when the server lists it: HEAD's id is the same commit.
  const target = head.symref === undefined ? undefined : byName.get(head.symref);
  const commit = peeledCommit(target ?? head);
  return { ref: 'HEAD', commit, kind: 'head', ...(head.symref === undefined ? {} : { target: head.symref }) };
}

function fromRef(ref: RemoteRef): ResolvedRef {
  const kind: RefKind = ref.name.startsWith('refs/tags/') ? 'tag' : 'branch';
  return { ref: ref.name, commit: peeledCommit(ref), kind };
}

/** An annotated tag (or any ref to a tag object) stands for the object it peels to. */
function peeledCommit(ref: RemoteRef): string {
  return ref.peeled ?? ref.oid;
}
