import { spawn, spawnSync } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openContentStore } from '@agentproto/content-cache';
import { servedRepo } from './support/git.js';
import { tempDir } from './support/temp.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const child = fileURLToPath(new URL('./support/prepare-child.ts', import.meta.url));

function prepareInChild(
  root: string,
  declaration: unknown,
  startAt: number,
): Promise<Array<{ dir: string; version: string; contentId: string; hit: boolean }>> {
  const proc = spawn(
    process.execPath,
    ['--conditions=@agentproto/source', '--import', 'tsx', child, root, JSON.stringify(declaration), String(startAt)],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  proc.stdout.on('data', (chunk: Buffer) => (out += chunk));
  proc.stderr.on('data', (chunk: Buffer) => (err += chunk));
  return new Promise((resolve, reject) => {
    // A child that hangs is killed and reported with what it printed, not waited for forever.
    const watchdog = setTimeout(() => {
      const running = spawnSync('ps', ['-eo', 'pid,ppid,etimes,args'], { encoding: 'utf8' }).stdout;
      proc.kill('SIGKILL');
      reject(new Error(`child ${proc.pid} still running after 60 s; its stderr:\n${err}\nprocesses:\n${running}`));
    }, 60_000);
    // 'close', not 'exit': only then has all of the child's output been read.
    proc.on('close', (code) => {
      clearTimeout(watchdog);
      try {
        if (code === 0) resolve(JSON.parse(out) as never);
        else reject(new Error(`child exited ${code}: ${err}`));
      } catch (error) {
        reject(new Error(`child printed no JSON result (${(error as Error).message}): ${out.slice(0, 500)} ${err}`));
      }
    });
  });
}

describe('preparation in several processes at once', () => {
  it('4 processes miss on the same skills together: each gets the same trees, and exactly one object per content is published', async () => {
    const files: Record<string, string> = {};
    for (const name of ['alpha', 'beta', 'gamma']) {
      files[`skills/${name}/SKILL.md`] = `# ${name}\n`;
      for (let i = 0; i < 30; i += 1) files[`skills/${name}/ref/${i}.md`] = `${name} ${i}\n`.repeat(20);
    }
    const { url } = await servedRepo({ commits: [{ files }] });
    const root = join(await tempDir(), 'store');
    const declaration = ['alpha', 'beta', 'gamma'].map((name) => `${url}#skills/${name}`);
    const startAt = Date.now() + 2500;
    const results = await Promise.all(Array.from({ length: 4 }, () => prepareInChild(root, declaration, startAt)));

    for (let index = 0; index < 3; index += 1) {
      expect(new Set(results.map((r) => r[index]!.contentId)).size).toBe(1);
      expect(new Set(results.map((r) => r[index]!.dir)).size).toBe(1);
    }
    // Every skill was fetched by at least one process (the store started empty).
    expect(results.flat().filter((r) => !r.hit).length).toBeGreaterThanOrEqual(3);
    const store = await openContentStore({ root });
    expect((await store.list()).objects).toHaveLength(3);
    const report = await store.verify();
    expect(report.corrupt).toEqual([]);
    expect(await readdir(join(root, 'staging'))).toEqual([]);
    expect(await readFile(join(results[0]![1]!.dir, 'SKILL.md'), 'utf8')).toBe('# beta\n');
  }, 120_000);
});
