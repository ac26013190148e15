import { raceAbort, throwIfAborted } from './abort.js';
import { authHeaders, secretsOf } from './credentials.js';
import { checkServerRefs, type RemoteRefs } from './remote-refs.js';
import { engineError, finalError, openRemote, type RemoteOptions } from './remote.js';

export type ListRefsOptions = RemoteOptions;

/**
 * Every ref of a remote, as `git ls-remote` shows them: each ref with its id, annotated
 * tags with the commit they peel to (`peeled`), and HEAD with the branch it points to
 * (`symref`). The default engine asks with protocol v2 (`ls-refs` with `peel` and
 * `symrefs`): one GET and one POST.
 */
export async function listRefs(url: string, options: ListRefsOptions = {}): Promise<RemoteRefs> {
  const { signal } = options;
  const remote = openRemote(url, options);
  throwIfAborted(signal, 'listRefs');
  // The host's own callback: what it throws is its own error and passes through as is.
  const headers = await authHeaders(options.auth, remote.url);
  const secrets = secretsOf(headers);
  try {
    throwIfAborted(signal, 'listRefs');
    const work = remote.engine.listRefs({ url: remote.url, headers, signal }).catch((error: unknown) => {
      throw engineError(error, remote.url);
    });
    return checkServerRefs(remote.url, await raceAbort(work, signal, 'listRefs'));
  } catch (error) {
    throw finalError(error, 'listRefs', signal, secrets);
  }
}
