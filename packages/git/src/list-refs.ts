import { throwIfAborted } from './abort.js';
import { checkServerRefs, type RemoteRefs } from './remote-refs.js';
import { givenWorkDir, openRemote, type RemoteOptions, withEngineSession } from './remote.js';

/**
 * Every ref of a remote, as `git ls-remote` shows them: each ref with its id, annotated
 * tags with the commit they peel to (`peeled`), and HEAD with the branch it points to
 * (`symref`). The default engine asks with protocol v2 (`ls-refs` with `peel` and
 * `symrefs`): one GET and one POST.
 */
export async function listRefs(url: string, options: RemoteOptions = {}): Promise<RemoteRefs> {
  const operation = 'listRefs';
  const { signal } = options;
  const remote = openRemote(url, options);
  const given = givenWorkDir(options);
  throwIfAborted(signal, operation);
  return withEngineSession(operation, remote.url, options, given, async ({ headers, work, calls }) => {
    const refs = await calls.run(remote.engine.listRefs({ url: remote.url, headers, signal, workDir: work.path }));
    return checkServerRefs(remote.url, refs);
  });
}
