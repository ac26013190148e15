export { SKILL_FINDING_CODES, type SkillFindingCode } from './codes.js';
export { type Frontmatter, parseFrontmatter } from './frontmatter.js';
export {
  MAX_COMPATIBILITY_LENGTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_NAME_LENGTH,
  SKILL_FILE,
  type SkillCheck,
  checkSkill,
  skillNameProblem,
} from './check.js';
export { type SkillLayout, selectSkills } from './layout.js';
export {
  type ProvenanceSource,
  type RemovedProvenance,
  addProvenanceHeader,
  removeProvenanceHeader,
} from './provenance.js';
