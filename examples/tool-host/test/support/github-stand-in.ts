import {
  type GitHttpServer,
  type MadeRepo,
  type TempDir,
  makeRepo,
  startGitHttpServer,
  tempDir,
} from '@agentproto/testkit';

/**
 * A local stand-in for GitHub: real bare repositories served over git smart HTTP by
 * `git http-backend` on 127.0.0.1. The github connector speaks git, not GitHub's REST API,
 * so `${url}/acme/tool.git` is all it needs. Its `stats` count every request it answers.
 */
export interface GithubStandIn {
  url: string;
  server: GitHttpServer;
  /** A repository `owner/name`, served at `${url}/owner/name.git`. */
  repo(name: string, spec: Omit<Parameters<typeof makeRepo>[0], 'root' | 'name'>): Promise<MadeRepo>;
  /** Requests answered since the last reset. */
  requests(): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startGithubStandIn(): Promise<GithubStandIn> {
  const root: TempDir = await tempDir('tool-host-github-');
  const server = await startGitHttpServer({ root: root.path });
  return {
    url: server.url,
    server,
    repo: (name, spec) => makeRepo({ ...spec, root: root.path, name: `${name}.git` }),
    requests: () => server.stats.requests,
    reset: () => server.resetStats(),
    async close() {
      await server.close();
      await root.cleanup();
    },
  };
}
