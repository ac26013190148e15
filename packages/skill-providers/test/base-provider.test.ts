import { readFile, stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { BaseSkillProvider, type ProviderContext, localSandbox, type Sandbox } from '@agentproto/skill-providers';
import { tempDir } from './support/temp.js';

class Writer extends BaseSkillProvider {
  readonly id = 'writer';
  validate() {}
  egressHosts() {
    return [];
  }
  async resolve() {
    return { version: '1', contentId: '1' };
  }
  async fetch() {}
  write(context: ProviderContext, name: string, data: string) {
    return this.writeCredential(context, name, data);
  }
}

function contextWith(sandbox: Sandbox, privateDir: string, signal: AbortSignal): ProviderContext {
  return {
    sandbox,
    privateDir,
    signal,
    secrets: () => undefined,
    vault: () => undefined,
    facts: { recall: async () => undefined, remember: async () => undefined },
  };
}

describe('writeCredential', () => {
  it('writes the file with mode 0600 into the private folder and returns its path', async () => {
    const sandbox = localSandbox({ privateRoot: await tempDir() });
    const privateDir = await sandbox.makePrivateDir();
    expect((await stat(privateDir)).mode & 0o777).toBe(0o700);
    const path = await new Writer().write(
      contextWith(sandbox, privateDir, new AbortController().signal),
      'deploy-key',
      'KEY',
    );
    expect(path).toBe(`${privateDir}/deploy-key`);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readFile(path, 'utf8')).toBe('KEY');
    await sandbox.removePrivateDir(privateDir);
  });

  it('settles an in-flight write before cancellation propagates, so cleanup cannot race it', async () => {
    const base = localSandbox({ privateRoot: await tempDir() });
    const events: string[] = [];
    const sandbox: Sandbox = {
      ...base,
      async writeFile(path, data, options) {
        events.push('write started');
        await new Promise((resolve) => setTimeout(resolve, 150));
        await base.writeFile(path, data, options);
        events.push('write landed');
      },
    };
    const privateDir = await sandbox.makePrivateDir();
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled')), 20);
    const outcome = await new Writer()
      .write(contextWith(sandbox, privateDir, controller.signal), 'deploy-key', 'KEY')
      .catch((error: unknown) => error);
    events.push('rejected');
    expect(outcome).toMatchObject({ code: 'SKILL_ABORTED' });
    expect(events).toEqual(['write started', 'write landed', 'rejected']);
  });

  it('refuses a name that is not a plain file name, and writes nothing once cancelled', async () => {
    const sandbox = localSandbox({ privateRoot: await tempDir() });
    const privateDir = await sandbox.makePrivateDir();
    const writer = new Writer();
    await expect(
      writer.write(contextWith(sandbox, privateDir, new AbortController().signal), '../key', 'K'),
    ).rejects.toThrow('not a plain file name');
    await expect(writer.write(contextWith(sandbox, privateDir, AbortSignal.abort()), 'key', 'K')).rejects.toMatchObject(
      { code: 'SKILL_ABORTED' },
    );
    await expect(stat(`${privateDir}/key`)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
