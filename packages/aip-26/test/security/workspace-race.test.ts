import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { renderings, startLinkSwapper, tempDir, writeOutsideSecret } from '@agentproto/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SourceResolutionError,
  WorkspaceChangedError,
  WorkspaceLinkError,
  defineCodeToFile,
  defineCodeWithReport,
  nodeWorkspaceFs,
} from '../../src/index.js';
import { measureOnOpenOf } from '../../src/workspace/node-workspace-fs.js';

/**
 * The attack of a workspace owner on `defineCode`: while the host builds, a process of
 * theirs exchanges a workspace folder with a link to a folder outside the workspace, in a
 * tight loop. Each name the reader checks and then opens again may lead to either. The
 * outside folder holds the same file names (and one of its own), each a canary of a size no
 * inside file has.
 */
const BUILDS = 400;
const BUDGET_MS = 4_000;

describe('a workspace whose folders are swapped for links while it is read', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    dir = await tempDir('aip26-race-');
  });
  afterAll(() => dir.cleanup());

  /** ws/src/lib (real) and ws/.park/lib (a link out): the swapper exchanges the two names. */
  async function scene() {
    const workspaceRoot = join(dir.path, `ws-${Math.random().toString(36).slice(2)}`);
    const names = ['main.ts', 'util.ts', 'deep/inner.ts'];
    const outside = await writeOutsideSecret(
      join(workspaceRoot, '..', `outside-${Math.random().toString(36).slice(2)}`),
      names,
    );
    for (const [i, name] of names.entries()) {
      await mkdir(join(workspaceRoot, 'src/lib', name, '..'), { recursive: true });
      await writeFile(join(workspaceRoot, 'src/lib', name), `export const inside${i} = ${'1'.repeat(100 + i)};\n`);
    }
    await writeFile(join(workspaceRoot, 'src/index.ts'), 'export * from "./lib/main.ts";\n');
    await mkdir(join(workspaceRoot, '.park'));
    await symlink(outside.dir, join(workspaceRoot, '.park/lib'));
    return { workspaceRoot, outside, a: join(workspaceRoot, 'src/lib'), b: join(workspaceRoot, '.park/lib') };
  }

  /**
   * `build` again and again while the swapper runs: what each build gave (the bundle's bytes
   * and its report, as text) and each refusal are searched for the outside's canaries, and
   * every refusal must be typed. Expects the race to have run and nothing to have leaked.
   */
  async function raceBuilds(
    { outside, a, b }: Awaited<ReturnType<typeof scene>>,
    build: () => Promise<(Buffer | string)[]>,
  ): Promise<void> {
    const swapper = await startLinkSwapper(a, b);
    const bundleLeaks: string[] = [];
    const leaks: string[] = [];
    const untyped: string[] = [];
    let built = 0;
    let refused = 0;
    const started = performance.now();
    try {
      for (let i = 0; i < BUILDS && performance.now() - started < BUDGET_MS; i++) {
        try {
          const found = (await build()).flatMap((made) => outside.leaksIn(made));
          built += 1;
          if (found.length > 0) bundleLeaks.push(`bundle ${i}: ${found.join(', ')}`);
        } catch (error) {
          refused += 1;
          // A typed refusal, and nothing in it (message, fields, causes) about the outside.
          const cause = (error as Error).cause;
          const typed =
            error instanceof SourceResolutionError &&
            [WorkspaceLinkError, WorkspaceChangedError].some((type) => cause instanceof type);
          if (!typed) untyped.push(String(error));
          for (const text of renderings(error)) {
            const found = outside.leaksIn(text);
            if (found.length > 0) leaks.push(`error ${i}: ${found.join(', ')} in ${text.slice(0, 300)}`);
          }
        }
      }
    } finally {
      const swaps = await swapper.stop();
      // The race really ran while the builds did.
      expect(swaps).toBeGreaterThan(100);
    }
    expect(bundleLeaks.slice(0, 5)).toEqual([]);
    expect(leaks.slice(0, 5)).toEqual([]);
    expect(untyped.slice(0, 5)).toEqual([]);
    expect(built + refused).toBeGreaterThan(10);
  }

  it('never puts a byte from outside the workspace into a bundle while folders are swapped for links, and its errors say nothing about outside files', async () => {
    const race = await scene();
    const { workspaceRoot } = race;
    const code = {
      sources: [
        { local: 'src' },
        { local: { path: 'src/lib/main.ts', as: 'entry.ts' } },
        { local: { path: 'src/lib', as: 'globbed', glob: '**/*.ts' } },
      ],
    };
    // Before the race: the honest workspace builds.
    const honest = await defineCodeWithReport({ code, workspaceRoot });
    expect(honest.report.files).toBe(8);
    await raceBuilds(race, async () => [gunzipSync((await defineCodeWithReport({ code, workspaceRoot })).bundle)]);
  });

  it('the same for a bundle in memory and one written to a file, their one folder listed without a stat of each file and each measured as it is opened', async () => {
    const race = await scene();
    const { workspaceRoot } = race;
    const code = { sources: [{ local: 'src' }] };
    const path = join(workspaceRoot, '..', `bundle-${Math.random().toString(36).slice(2)}.tar.gz`);
    expect((await defineCodeToFile({ code, workspaceRoot }, path)).files).toBe(4);
    expect((await defineCodeWithReport({ code, workspaceRoot })).report.files).toBe(4);
    await raceBuilds(race, async () => {
      const inMemory = await defineCodeWithReport({ code, workspaceRoot });
      await rm(path, { force: true });
      const report = await defineCodeToFile({ code, workspaceRoot }, path);
      return [
        gunzipSync(inMemory.bundle),
        JSON.stringify(inMemory.report),
        gunzipSync(await readFile(path)),
        JSON.stringify(report),
      ];
    });
  });

  it('never returns outside bytes, sizes or names from any workspace read while folders are swapped for links', async () => {
    // The reader's own calls, thousands of times: each one is a chance for the swap to land
    // between a check and an open, far more than whole builds give in the same time.
    const { workspaceRoot, outside, a, b } = await scene();
    const workspace = nodeWorkspaceFs(workspaceRoot);
    const measure = measureOnOpenOf(workspace)!;
    const reads: Array<() => Promise<unknown>> = [
      () => measure.readDir('src/lib'),
      async () => {
        const file = await measure.open('src/lib/util.ts');
        try {
          const bytes = Buffer.alloc(file.size);
          file.readInto(bytes);
          return `${file.size} ${file.executable} ${bytes.toString('latin1')}`;
        } finally {
          file.close();
        }
      },
      () => workspace.readFile('src/lib/main.ts'),
      () => workspace.readDir('src/lib'),
      () => workspace.readDir('src/lib/deep'),
      () => workspace.stat!('src/lib/util.ts'),
      () => workspace.readFileInto!('src/lib/deep/inner.ts', Buffer.alloc(102)),
      () => workspace.readManifest('src/lib'),
    ];
    const leaks: string[] = [];
    const untyped: string[] = [];
    let calls = 0;
    const swapper = await startLinkSwapper(a, b);
    const started = performance.now();
    try {
      while (performance.now() - started < 3_000) {
        for (const read of reads) {
          calls += 1;
          try {
            const result = await read();
            const text =
              Buffer.isBuffer(result) || result instanceof Uint8Array ? Buffer.from(result) : JSON.stringify(result);
            const found = outside.leaksIn(text);
            if (found.length > 0) leaks.push(`result: ${found.join(', ')}`);
          } catch (error) {
            // The manifest of src/lib is a parse failure (there is none): any other refusal is typed.
            const expected =
              error instanceof WorkspaceLinkError ||
              error instanceof WorkspaceChangedError ||
              /no manifest\.yaml or CODE\.md/.test(String(error));
            if (!expected) untyped.push(String(error));
            for (const text of renderings(error)) {
              const found = outside.leaksIn(text);
              if (found.length > 0) leaks.push(`error: ${found.join(', ')} in ${text.slice(0, 300)}`);
            }
          }
        }
      }
    } finally {
      expect(await swapper.stop()).toBeGreaterThan(100);
    }
    expect(leaks.slice(0, 5)).toEqual([]);
    expect(untyped.slice(0, 5)).toEqual([]);
    expect(calls).toBeGreaterThan(60);
  });

  it('reads nothing through a link out of the workspace, and says so without naming where it led', async () => {
    const { workspaceRoot, outside, a, b } = await scene();
    const workspace = nodeWorkspaceFs(workspaceRoot);
    // The folder swapped for the link out, and left so: every read of it is refused.
    await rename(a, `${a}.real`);
    await rename(b, a);
    try {
      for (const read of [
        () => workspace.readFile('src/lib/main.ts'),
        () => workspace.readDir('src/lib'),
        () => workspace.readFileInto!('src/lib/main.ts', Buffer.alloc(outside.size)),
      ]) {
        const error = await read().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(WorkspaceLinkError);
        expect((error as WorkspaceLinkError).reason).toBe('escapes');
        for (const text of renderings(error)) expect(outside.leaksIn(text)).toEqual([]);
      }
      expect(await workspace.stat!('src/lib/deep').catch((e: unknown) => e)).toBeInstanceOf(WorkspaceLinkError);
    } finally {
      await rename(a, b);
      await rename(`${a}.real`, a);
    }
  });
});
