export interface ObjectMarker {
  format: 1;
  objectId: string;
  provider: string;
  contentId: string;
  /** The key's scope, when it has one: part of the object's identity (see objectIdOf). */
  scope?: string;
  digest: string;
  files: number;
  bytes: number;
}

/**
 * Whether a parsed completion marker is whole and names this object: every field a reader
 * prints, compares or sums has its type, so a marker cut short or edited by hand is refused
 * as corrupt instead of failing later in whoever reads it.
 */
export function isMarkerOf(marker: unknown, objectId: string): marker is ObjectMarker {
  if (typeof marker !== 'object' || marker === null) return false;
  const m = marker as Record<string, unknown>;
  const count = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
  return (
    m.format === 1 &&
    m.objectId === objectId &&
    typeof m.provider === 'string' &&
    typeof m.contentId === 'string' &&
    (m.scope === undefined || typeof m.scope === 'string') &&
    typeof m.digest === 'string' &&
    count(m.files) &&
    count(m.bytes)
  );
}
