export { SKILL_FINDING_CODES, type SkillFindingCode } from './codes.js';
export { parseFrontmatter } from './frontmatter.js';
export {
  SKILL_FILE,
  checkSkill,
  skillNameProblem,
} from './check.js';
export { selectSkills } from './layout.js';
export {
  addProvenanceHeader,
  removeProvenanceHeader,
} from './provenance.js';
