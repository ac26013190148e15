/**
 * What can go wrong talking to an OCI registry. Callers branch on `code`. Messages name the
 * registry (origin only), the repository and the operation; they never hold a credential,
 * an Authorization header, a token, a URL query, or text the registry sent back besides its
 * OCI error code.
 */
export type RegistryErrorCode =
  /** The URL, repository or reference is not usable (userinfo in the URL, http without allowInsecureHttp, bad name). */
  | 'REGISTRY_INVALID'
  /** No answer: connection refused or reset, DNS, timeout. Also while the remote is bypassed after such a failure. */
  | 'REGISTRY_UNREACHABLE'
  /** 401/403 after the credentials from the auth callback were tried, or a token request failed. */
  | 'REGISTRY_AUTH'
  /** Any other unexpected status. `status` and the registry's OCI error code say which. */
  | 'REGISTRY_HTTP'
  /** Content whose SHA-256 is not the digest it was asked for, or a digest header that disagrees. */
  | 'REGISTRY_DIGEST_MISMATCH'
  /** A manifest or config that is not what this client writes (shape, media type, sizes). */
  | 'REGISTRY_BAD_ARTIFACT'
  /** A blob, manifest, tag list page or token answer larger than its limit (`limit` says which). */
  | 'REGISTRY_TOO_LARGE';

export class RegistryError extends Error {
  readonly code: RegistryErrorCode;
  readonly status: number | undefined;
  /** The registry's own error code (`BLOB_UNKNOWN`, `DENIED`, ...), when it sent one. */
  readonly registryCode: string | undefined;
  /** For REGISTRY_TOO_LARGE: the limit, in bytes, that the answer went over. */
  readonly limit: number | undefined;
  constructor(
    code: RegistryErrorCode,
    message: string,
    options: { status?: number; registryCode?: string; limit?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RegistryError';
    this.code = code;
    this.status = options.status;
    this.registryCode = options.registryCode;
    this.limit = options.limit;
  }
}
