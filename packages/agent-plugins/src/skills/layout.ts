import { type Finding, findingFrom, sortFindings } from '../findings.js';
import { SKILL_FINDING_CODES } from './codes.js';
import { SKILL_FILE } from './check.js';
import { byteOrder } from '../text.js';

export interface SkillLayout {
  /** The skill directory names, sorted in code-point order (the same in every locale). */
  skills: string[];
  /** Sorted with sortFindings. */
  findings: Finding[];
}

const SKILLS_DIR = 'skills/';

/**
 * The skills a client discovers among the package's file paths (Agent Plugins §4.2, §7.1): each
 * immediate child directory of `skills/` that holds a file named exactly `SKILL.md`. Paths are
 * package-relative regular files with "/" separators; paths outside `skills/` and paths with an
 * empty, "." or ".." segment are not considered (containment is checked where files are read).
 *
 * | Path                                   | Outcome                                                |
 * |----------------------------------------|--------------------------------------------------------|
 * | `skills/<name>/SKILL.md`               | skill `<name>`                                         |
 * | `skills/SKILL.md`                      | not a skill, skill.not-in-directory                    |
 * | `skills/<a>/…/SKILL.md`, `<a>` no skill | not a skill, skill.nested: clients never search deeper |
 * | `skills/<a>/…/SKILL.md`, `<a>` a skill | a file skill `<a>` carries (a template, an example); no finding |
 * | `skills/<name>/skill.md` (any other case), no `SKILL.md` | not a skill, skill.file-name-case   |
 *
 * Pure.
 */
export function selectSkills(paths: Iterable<string>): SkillLayout {
  const skills = new Set<string>();
  const nested = new Map<string, string[]>();
  const miscased = new Map<string, string[]>();
  const findings: Finding[] = [];

  for (const path of new Set(paths)) {
    if (!path.startsWith(SKILLS_DIR)) continue;
    const segments = path.slice(SKILLS_DIR.length).split('/');
    if (segments.some((s) => s === '' || s === '.' || s === '..')) continue;
    const [dir, ...rest] = segments;
    const last = segments[segments.length - 1] ?? '';
    if (dir === undefined) continue;
    if (rest.length === 0) {
      if (dir === SKILL_FILE) {
        findings.push(
          findingFrom(
            SKILL_FINDING_CODES,
            'skill.not-in-directory',
            path,
            'is directly in skills/; move it to skills/<name>/SKILL.md',
          ),
        );
      }
    } else if (rest.length === 1 && last === SKILL_FILE) {
      skills.add(dir);
    } else if (rest.length === 1 && last.toUpperCase() === SKILL_FILE.toUpperCase()) {
      miscased.set(dir, [...(miscased.get(dir) ?? []), path]);
    } else if (rest.length > 1 && last === SKILL_FILE) {
      nested.set(dir, [...(nested.get(dir) ?? []), path]);
    }
  }

  for (const [dir, found] of nested) {
    if (skills.has(dir)) continue;
    for (const path of found) {
      findings.push(
        findingFrom(
          SKILL_FINDING_CODES,
          'skill.nested',
          path,
          'is below an immediate child of skills/ and is not discovered',
        ),
      );
    }
  }
  for (const [dir, found] of miscased) {
    if (skills.has(dir)) continue;
    for (const path of found) {
      findings.push(
        findingFrom(
          SKILL_FINDING_CODES,
          'skill.file-name-case',
          path,
          'is not named exactly SKILL.md and is not discovered',
        ),
      );
    }
  }

  return { skills: [...skills].sort(byteOrder), findings: sortFindings(findings) };
}
