/**
 * Size limits for every manifest path. They match what Linux enforces (NAME_MAX 255, PATH_MAX
 * 4096), so a path we accept can be created on the runner; the depth bound keeps a hostile
 * `a/a/a/…` from costing more than a few thousand steps anywhere downstream.
 */
export const PATH_LIMITS = Object.freeze({
  /** Bytes of UTF-8 in the whole path, after NFC. */
  maxBytes: 4096,
  /** Bytes of UTF-8 in one segment (file or folder name), after NFC. */
  maxSegmentBytes: 255,
  /** Segments after normalisation. */
  maxDepth: 128,
});
