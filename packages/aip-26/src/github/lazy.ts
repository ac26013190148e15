/**
 * The git client and the content store, each loaded the first time a github source needs
 * it: a bundle of workspace and inline sources never does. Loading them (with the OCI client
 * the store brings) took 55-70 ms of a cold process, on the critical path of every
 * `agentproto code bundle` before its first file was read.
 */
let git: Promise<typeof import('@agentproto/git')> | undefined;
let contentCache: Promise<typeof import('@agentproto/content-cache')> | undefined;

export function loadGit(): Promise<typeof import('@agentproto/git')> {
  git ??= import('@agentproto/git');
  return git;
}

export function loadContentCache(): Promise<typeof import('@agentproto/content-cache')> {
  contentCache ??= import('@agentproto/content-cache');
  return contentCache;
}
