import { GitTransportError, quote } from '../errors.js';
import type { RemoteRef } from '../remote-refs.js';

/**
 * `git ls-remote --symref` output as RemoteRef[], in the server's order:
 *
 * ```
 * ref: refs/heads/main	HEAD          (HEAD's target)
 * <oid>	HEAD
 * <oid>	refs/tags/v1                  (an annotated tag: the tag object)
 * <oid>	refs/tags/v1^{}               (what it peels to)
 * ```
 *
 * The lines are only split here; names and ids are checked by the caller (checkServerRefs),
 * as for every engine.
 */
export function parseLsRemote(output: string, url: string): RemoteRef[] {
  const refs: RemoteRef[] = [];
  const byName = new Map<string, RemoteRef>();
  const symrefs = new Map<string, string>();
  const peeled = new Map<string, string>();
  for (const line of output.split('\n')) {
    if (line === '') continue;
    const tab = line.indexOf('\t');
    if (tab < 0) throw new GitTransportError(url, `git ls-remote printed a line without a tab: ${quote(line)}`);
    const left = line.slice(0, tab);
    const name = line.slice(tab + 1);
    if (left.startsWith('ref: ')) {
      symrefs.set(name, left.slice('ref: '.length));
      continue;
    }
    if (name.endsWith('^{}')) {
      peeled.set(name.slice(0, -'^{}'.length), left);
      continue;
    }
    if (byName.has(name)) throw new GitTransportError(url, `the server listed ${quote(name)} twice`);
    const ref: RemoteRef = { name, oid: left };
    byName.set(name, ref);
    refs.push(ref);
  }
  for (const [name, oid] of peeled) {
    const ref = byName.get(name);
    if (!ref) throw new GitTransportError(url, `the server listed a peeled ${quote(name)} without the ref itself`);
    ref.peeled = oid;
  }
  for (const [name, target] of symrefs) {
    const ref = byName.get(name);
    if (ref) ref.symref = target;
  }
  return refs;
}
