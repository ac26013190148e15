import { nodeCrypto } from '#libraries';

/** `sha256:<hex>` of a file's bytes: what the sidecar records for it. */
export function contentHash(bytes: Uint8Array): string {
  return `sha256:${nodeCrypto().createHash('sha256').update(bytes).digest('hex')}`;
}
