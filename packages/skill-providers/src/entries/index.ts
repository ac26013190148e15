// Skill entries: parsing a declaration (git strings or source objects) into SkillSource values.
export { parseGitString, parseGitRepository } from '../git/source.js';
export { parseSkillEntry, parseSkillDeclaration, canonicalDeclaration } from './entry.js';
export type { CanonicalDeclaration, SkillDeclaration, SkillSourceDeclaration } from './entry.js';
export { parseSkillDeclarationText } from './declaration-text.js';
export type { SkillDeclarationTextOptions } from './declaration-text.js';
export { skillNameProblem } from './name.js';
export { maskText as maskSkillSource } from './render.js';
export {
  SkillEntryError,
  SkillDeclarationInvalidError,
  SkillEntryInvalidError,
  SkillRepositoryInvalidError,
  SkillUrlHasCredentialsError,
  SkillRefInvalidError,
  SkillPathUnsafeError,
  SkillNameInvalidError,
  DuplicateSkillNameError,
} from './errors.js';
export type { SkillEntryErrorCode, EntryLocation } from './errors.js';
