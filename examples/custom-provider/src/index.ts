// An example skill provider: skill packs published as .tar.gz at an HTTPS URL, pinned by
// the archive's SHA-256. A host loads it by package name (loadRegistry reads `providers`),
// or registers `tarballProvider(options)` next to the built-in providers with createRegistry.
export { providers } from './providers.js';
export { TarballSkillProvider, tarballProvider, contentIdOf, TOKEN_ALLOWLIST_VARIABLE } from './provider.js';
export type { TarballProviderOptions } from './provider.js';
export {
  TarballArchiveInvalidError,
  TarballAuthError,
  TarballDigestMismatchError,
  TarballHttpError,
  TarballNotFoundError,
  TarballPathNotFoundError,
  TarballRequestError,
  TarballTokenInvalidError,
  TarballTokenNotApprovedError,
  TarballTooLargeError,
  TarballUnsafeEntryError,
} from './errors.js';
