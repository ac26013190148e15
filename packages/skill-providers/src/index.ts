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
export { localProvider, LocalSkillProvider, LocalVersionMismatchError } from './local/provider.js';
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

export {
  SkillError,
  UnknownProviderError,
  ProviderRegistrationError,
  SkillConfigError,
  CredentialNotApprovedError,
  SecretMissingError,
  TransportUnsupportedError,
  SkillPreparationError,
  SkillFileMissingError,
  SkillAbortedError,
  CredentialCleanupError,
} from './errors.js';
export type { EntryRef, Phase } from './errors.js';
export { importFrom, resolveFrom } from './import-from.js';
