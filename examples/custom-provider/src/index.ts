// An example skill provider: skill packs published as .tar.gz at an HTTPS URL, pinned by
// the archive's SHA-256. Register it next to the built-in providers with createRegistry.
export { TarballSkillProvider, tarballProvider, contentIdOf } from './provider.js';
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
