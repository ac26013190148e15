// @agentproto/skill-providers: prepare the skills a declaration names, from git and other providers, into the content store.
export { prepareSkills, resolveSkills, environmentSecrets } from './prepare/prepare.js';
export type { PrepareOptions, PrepareProgress, PreparedSkill, ResolvedSkill } from './prepare/prepare.js';

export type {
  BasicCredential,
  BasicVault,
  FactStore,
  FetchContext,
  ProviderContext,
  ResolvedSkillSource,
  SecretReader,
  SkillContentProvider,
  SkillSource,
} from './provider.js';
export { BaseSkillProvider } from './base-provider.js';
export { ProviderRegistry, createRegistry, loadRegistry } from './registry.js';
export type { LoadRegistryOptions } from './registry.js';
export { defaultRegistry } from './defaults.js';

export { gitProvider, GitSkillProvider, DEPLOY_KEY_ALLOWLIST_VARIABLE } from './git/provider.js';
export type { GitProviderOptions } from './git/provider.js';
export { localProvider, LocalSkillProvider } from './local/provider.js';
export type { LocalProviderOptions } from './local/provider.js';

export { localSandbox } from './sandbox/local.js';
export type { LocalSandboxOptions } from './sandbox/local.js';
export type { RunOptions, RunResult, Sandbox, SandboxCapabilities } from './sandbox/sandbox.js';

export {
  parseSkillDeclaration,
  parseSkillDeclarationText,
  parseSkillEntry,
  parseGitString,
  canonicalDeclaration,
} from './entries/index.js';
export type { SkillDeclarationTextOptions } from './entries/index.js';

// Errors: one class per failure kind, each with a stable literal `code` (README, "Errors").
export { SkillError } from './errors.js';
export type { ProviderErrorCode, SkillErrorCode } from './errors.js';
export {
  // Parsing a declaration.
  SkillEntryError,
  SkillDeclarationInvalidError,
  SkillEntryInvalidError,
  SkillRepositoryInvalidError,
  SkillUrlHasCredentialsError,
  SkillRefInvalidError,
  SkillPathUnsafeError,
  SkillNameInvalidError,
  DuplicateSkillNameError,
} from './entries/index.js';
export type { SkillEntryErrorCode, EntryLocation } from './entries/index.js';
export {
  // The registry.
  UnknownProviderError,
  ProviderRegistrationError,
  // validate, the credential, the transport.
  SkillConfigError,
  CredentialNotApprovedError,
  SecretMissingError,
  TransportUnsupportedError,
  // Preparing an entry.
  SkillPreparationError,
  ProviderResultInvalidError,
  SkillFileMissingError,
  SkillContentMismatchError,
  SkillAbortedError,
  CredentialCleanupError,
} from './errors.js';
export type { EntryRef, Phase, SkillPreparationCode } from './errors.js';
// The local provider's.
export { LocalSourceNotFoundError, LocalSourceChangedError, LocalVersionMismatchError } from './local/provider.js';
export { importFrom, resolveFrom } from './import-from.js';
