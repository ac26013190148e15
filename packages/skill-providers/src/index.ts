// @agentproto/skill-providers: prepare the skills a declaration names, from git and other providers, into the content store.
// Every name here is a promise to hosts; entry parsing steps, canonical declarations and the git internals stay inside.

// Prepare (fetch, check, publish) or only resolve a declaration's skills
export { prepareSkills, resolveSkills, lockSkills, environmentSecrets } from './prepare/prepare.js';
export type { PrepareOptions, PrepareProgress, PreparedSkill, ResolvedSkill } from './prepare/prepare.js';
// What a declaration is (its JSON Schema: schemas/skills/1/skills.schema.json)
export type { SkillDeclaration, SkillSourceDeclaration } from './entries/index.js';
export { SKILLS_SCHEMA_ID, SKILLS_LOCK_SCHEMA_ID } from './entries/schema.js';

// Lock files: what a declaration resolved to, prepared again exactly (`locked`)
export { parseSkillLock, parseSkillLockText } from './prepare/lock.js';
export type { SkillLock, LockedSkill, LockedSkillDeclaration } from './prepare/lock.js';

// Make prepared skills visible to agents: DIR/<name>, a link into the store or a copy
export { linkSkills } from './link/link.js';
export type { LinkSkillsOptions, LinkedSkill } from './link/link.js';

// The provider contract, for a host's own providers
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

// Which providers a declaration may name: a registry, built or loaded from deployment-owned packages
export { ProviderRegistry, createRegistry, loadRegistry } from './registry.js';
export type { LoadRegistryOptions } from './registry.js';
export { defaultRegistry } from './defaults.js';
export { importFrom, resolveFrom } from './import-from.js';

// The providers this package ships: git (HTTPS and SSH) and a local folder
export { gitProvider, GitSkillProvider } from './git/provider.js';
export type { GitProviderOptions } from './git/provider.js';
export { localProvider, LocalSkillProvider } from './local/provider.js';
export type { LocalProviderOptions } from './local/provider.js';

// Where providers run: the sandbox contract and the default one, this machine
export { localSandbox } from './sandbox/local.js';
export type { LocalSandboxOptions } from './sandbox/local.js';
// … and bubblewrap: git and ssh isolated, reaching only the provider's egress hosts
export {
  bubblewrapSandbox,
  SandboxEgressRefusedError,
  SandboxIsolationUnavailableError,
} from './sandbox/bubblewrap.js';
export type { BubblewrapSandbox, BubblewrapSandboxOptions, IsolationMissing } from './sandbox/bubblewrap.js';
export type { RunOptions, RunResult, Sandbox, SandboxCapabilities } from './sandbox/sandbox.js';

// Read a declaration from its text, or one git string, without preparing anything
export { parseSkillDeclarationText, parseGitString } from './entries/index.js';
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
  // Lock files and linking.
  SkillLockInvalidError,
  SkillLockDriftError,
  SkillLinkConflictError,
  SkillLinkNameInvalidError,
  SkillLinkError,
} from './errors.js';
export type { EntryRef, Phase, SkillPreparationCode } from './errors.js';
// The local provider's.
export { LocalSourceNotFoundError, LocalSourceChangedError, LocalVersionMismatchError } from './local/provider.js';
