import { contentHash } from '../bundle/hash.js';
import { type PackageFile, SIDECAR, byteOrder } from '../bundle/include.js';
import type { Finding } from '../findings.js';
import { renderJson } from './render.js';
import { type Sidecar, omittedOf } from './sidecar.js';

const GENERATOR = '@agentproto/agent-plugins';

/**
 * The sidecar over `files`. `findings` are the build's: each error among them (a component or
 * field a client would skip, so the build left it out) is recorded under `omitted`.
 */
export function renderSidecar(
  spec: string,
  files: ReadonlyMap<string, PackageFile>,
  findings: readonly Finding[] = [],
): PackageFile {
  const hashes: Record<string, string> = {};
  for (const path of [...files.keys()].filter((path) => path !== SIDECAR).sort(byteOrder))
    hashes[path] = contentHash(files.get(path)!.bytes);
  const sidecar: Sidecar = { generator: GENERATOR, spec, files: hashes };
  const omitted = omittedOf(findings);
  if (omitted.length > 0) sidecar.omitted = omitted;
  return { bytes: renderJson(sidecar), mode: 0o644 };
}
