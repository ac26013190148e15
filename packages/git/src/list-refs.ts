import { throwIfAborted } from './abort.js';
import { authHeaders, secretsOf } from './credentials.js';
import { checkServerRefs, type RemoteRefs } from './remote-refs.js';
import {
  closeWorkDir,
  EngineCalls,
  finalError,
  givenWorkDir,
  openRemote,
  openWorkDir,
  type RemoteOptions,
  type WorkDir,
} from './remote.js';

export type ListRefsOptions = RemoteOptions;

/**
 * Every ref of a remote, as `git ls-remote` shows them: each ref with its id, annotated
 * tags with the commit they peel to (`peeled`), and HEAD with the branch it points to
 * (`symref`). The default engine asks with protocol v2 (`ls-refs` with `peel` and
 * `symrefs`): one GET and one POST.
 */
export async function listRefs(url: string, options: ListRefsOptions = {}): Promise<RemoteRefs> {
  const operation = 'listRefs';
  const { signal } = options;
  const remote = openRemote(url, options);
  const given = givenWorkDir(options);
  throwIfAborted(signal, operation);
  // The host's own callback: what it throws is its own error and passes through as is.
  const headers = await authHeaders(options.auth, remote.url);
  const secrets = secretsOf(headers);
  const calls = new EngineCalls(operation, remote.url, signal);
  let work: WorkDir | undefined;
  try {
    throwIfAborted(signal, operation);
    work = await openWorkDir(given, options.privateDir);
    throwIfAborted(signal, operation);
    const refs = await calls.run(remote.engine.listRefs({ url: remote.url, headers, signal, workDir: work.path }));
    return checkServerRefs(remote.url, refs);
  } catch (error) {
    throw finalError(error, operation, signal, secrets);
  } finally {
    await calls.unwind();
    await closeWorkDir(work);
  }
}
