import { afterAll, beforeAll } from 'vitest';
import {
  type BasicAuth,
  type GitHttpServer,
  type TempDir,
  makeRepo,
  startGitHttpServer,
  tempDir,
} from '@agentproto/testkit';

export interface ServedSkills {
  /** `http://127.0.0.1:PORT/skills.git`, set once the file's tests start. */
  readonly url: string;
  readonly server: GitHttpServer;
}

/**
 * A skills repository (tag v1, `skills/review` holding SKILL.md, or `files`) served over smart HTTP for a whole test
 * file: started before its first test, stopped after its last. Its folder is the testkit's,
 * not a scratch folder (those go after each test).
 */
export function serveSkillsForFile(options: { auth?: BasicAuth; files?: Record<string, string> } = {}): ServedSkills {
  let folder: TempDir | undefined;
  let server: GitHttpServer | undefined;
  beforeAll(async () => {
    folder = await tempDir();
    await makeRepo({
      root: folder.path,
      name: 'skills.git',
      commits: [{ files: options.files ?? { 'skills/review/SKILL.md': '# review\n' } }],
      tags: [{ name: 'v1', target: 0 }],
    });
    server = await startGitHttpServer({ root: folder.path, ...(options.auth ? { auth: options.auth } : {}) });
  });
  afterAll(async () => {
    await server?.close();
    await folder?.cleanup();
  });
  return {
    get url() {
      return server!.urlFor('skills.git');
    },
    get server() {
      return server!;
    },
  };
}
