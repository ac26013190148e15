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
 * Between two bundles the SDK keeps the last object of each class a bundle is made of, for
 * V8's sake (see keepShape): each must have let go of everything of its bundle first. A
 * host that drops a bundle, or the manifest it was made from, gets that memory back.
 */
describe('what is kept from one bundle to the next holds nothing of it', () => {
  it('a bundle in memory and the source it was made from are collected once the host lets go of them', async () => {
    const workspaceRoot = await makeWorkspace(files(200));
    let code: CodeSpec | undefined = { sources: [{ local: 'src/' }] };
    let bundle: Buffer | undefined = await defineCode({ workspaceRoot, code });
    expect(bundle.length).toBeGreaterThan(0);
    const bytes = new WeakRef(bundle.buffer);
    // The source as declared: what every file of a bundle's overlay refers back to.
    const source = new WeakRef(code.sources[0]!);
    bundle = undefined;
    code = undefined;
    expect(await collected(bytes)).toBe(true);
    expect(await collected(source)).toBe(true);
  });

  it('the same with a digest, a run block and more than one source', async () => {
    const workspaceRoot = await makeWorkspace({ ...files(50), 'tool.sh': '#!/bin/sh\n' });
    let code: CodeSpec | undefined = {
      sources: [{ local: 'src/' }, { local: 'tool.sh' }, { inline: { path: 'note.txt', content: 'x'.repeat(4096) } }],
    };
    let made: { bundle: Buffer } | undefined = await defineCodeWithReport({
      workspaceRoot,
      code,
      run: 'sh tool.sh',
    });
    const bytes = new WeakRef(made.bundle.buffer);
    const source = new WeakRef(code.sources[0]!);
    made = undefined;
    code = undefined;
    expect(await collected(bytes)).toBe(true);
    expect(await collected(source)).toBe(true);
  });

  it('a bundle written to a file leaves its manifest collectable too', async () => {
    const workspaceRoot = await makeWorkspace(files(200));
    let code: CodeSpec | undefined = { sources: [{ local: 'src/' }] };
    await defineCodeToFile({ workspaceRoot, code }, join(await tempDir(), 'bundle.tar.gz'));
    const source = new WeakRef(code.sources[0]!);
    code = undefined;
    expect(await collected(source)).toBe(true);
  });
});
