// What a worker of runBounded calls (hostile-manifests-end-in-typed-errors.test.ts): a
// code-workspace folder holding the hostile bytes as manifest.yaml or CODE.md, read by
// nodeWorkspaceFs().readManifest, in the worker's bounded heap.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeWorkspaceFs } from '../../../src/index.js';

export async function readManifest({
  file,
  bytes,
}: {
  file: 'manifest.yaml' | 'CODE.md';
  bytes: Uint8Array;
}): Promise<string[]> {
  const root = await mkdtemp(join(tmpdir(), 'hostile-manifest-'));
  try {
    await writeFile(join(root, file), bytes);
    return Object.keys(await nodeWorkspaceFs(root).readManifest(''));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
