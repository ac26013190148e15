import { DEFAULT_MAX_PACKAGE_BYTES } from '../read/reader.js';

/** Caps on what pullPlugin accepts, each checked before or while the bytes arrive. */
export interface PullLimits {
  /** The layer blob as stored (compressed), refused from its descriptor before a byte is read. Default 256 MiB. */
  maxLayerBytes?: number;
  /**
   * The layer's tar stream once inflated, headers included, counted while it inflates (a gzip
   * bomb stops here). Default 288 MiB: validation's 256 MiB package limit and room for headers.
   */
  maxUnpackedBytes?: number;
  /** Regular files in the layer. Default 20 000. */
  maxFiles?: number;
}

/** pullPlugin's limits when `options.limits` leaves one unset: 256 MiB layer, 288 MiB inflated, 20 000 files. */
export const DEFAULT_PULL_LIMITS: Readonly<Required<PullLimits>> = Object.freeze({
  maxLayerBytes: 256 * 1024 * 1024,
  maxUnpackedBytes: DEFAULT_MAX_PACKAGE_BYTES + 32 * 1024 * 1024,
  maxFiles: 20_000,
});
