import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { type CodeSpec, defineCode, defineCodeToFile, defineCodeWithReport } from '../src/index.js';
import { makeWorkspace, tempDir } from './support/workspace.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Whether what `ref` points at was collected, after the turns and full collections that let it go. */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 5 && ref.deref() !== undefined; i++) {
    // A folder descriptor an opener held is closed at the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  return ref.deref() === undefined;
}

function files(count: number): Record<string, string> {
  return Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`src/m${i % 4}/f${i}.ts`, `export const v${i} = ${i};\n`]),
  );
}

/**
 * Makes a bundle of the code `declare` gives with `bundle`, lets go of both, and tells
 * whether the bundle's bytes (when it gives them) and the code's first source as declared
 * (what every file of a bundle's overlay refers back to) were collected.
 */
async function letGo(
  declare: () => CodeSpec,
  bundle: (code: CodeSpec) => Promise<Buffer | undefined>,
): Promise<{ bytes: boolean; source: boolean }> {
  let code: CodeSpec | undefined = declare();
  let made: Buffer | undefined = await bundle(code);
  const bytes = made === undefined ? undefined : new WeakRef(made.buffer);
  const source = new WeakRef(code.sources[0]!);
  made = undefined;
  code = undefined;
  return { bytes: bytes === undefined || (await collected(bytes)), source: await collected(source) };
}

/**
 * Between two bundles the SDK keeps the last object of each class a bundle is made of, for
 * V8's sake (see keepShape): each must have let go of everything of its bundle first. A
 * host that drops a bundle, or the manifest it was made from, gets that memory back.
 */
describe('what is kept from one bundle to the next holds nothing of it', () => {
  it('a bundle in memory and the source it was made from are collected once the host lets go of them', async () => {
    const workspaceRoot = await makeWorkspace(files(200));
    const kept = await letGo(
      () => ({ sources: [{ local: 'src/' }] }),
      async (code) => {
        const bundle = await defineCode({ workspaceRoot, code });
        expect(bundle.length).toBeGreaterThan(0);
        return bundle;
      },
    );
    expect(kept).toEqual({ bytes: true, source: true });
  });

  it('the same with a digest, a run block and more than one source', async () => {
    const workspaceRoot = await makeWorkspace({ ...files(50), 'tool.sh': '#!/bin/sh\n' });
    const kept = await letGo(
      () => ({
        sources: [{ local: 'src/' }, { local: 'tool.sh' }, { inline: { path: 'note.txt', content: 'x'.repeat(4096) } }],
      }),
      async (code) => (await defineCodeWithReport({ workspaceRoot, code, run: 'sh tool.sh' })).bundle,
    );
    expect(kept).toEqual({ bytes: true, source: true });
  });

  it('the same when the listing came out of archive order and the bundle was packed the usual way', async () => {
    // The listing sorts U+1F600 before U+E000 (UTF-16), the archive after (UTF-8): the writer
    // packing while listing declines, and stops holding the entries it had queued.
    const workspaceRoot = await makeWorkspace({
      ...files(50),
      'src/\u{1f600}.txt': 'smile',
      'src/\ue000.txt': 'private',
    });
    const kept = await letGo(
      () => ({ sources: [{ local: 'src/' }] }),
      (code) => defineCode({ workspaceRoot, code }),
    );
    expect(kept).toEqual({ bytes: true, source: true });
  });

  it('a bundle written to a file leaves its manifest collectable too', async () => {
    const workspaceRoot = await makeWorkspace(files(200));
    const target = join(await tempDir(), 'bundle.tar.gz');
    const kept = await letGo(
      () => ({ sources: [{ local: 'src/' }] }),
      async (code) => {
        await defineCodeToFile({ workspaceRoot, code }, target);
        return undefined;
      },
    );
    expect(kept.source).toBe(true);
  });
});
