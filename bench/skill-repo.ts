/**
 * The repository the skill benchmarks prepare from: 400 skills of 50 files (20,000 files,
 * 1-8 KiB of text-like content each) and 1,000 commits, the 999 later ones each rewriting
 * three files of other skills, so the target skill never changes. Deterministic: the same
 * seed gives the same repository on every run.
 */
import { textContent, xorshift } from './lib.ts';

export const SKILLS = 400; // 400 skills x 50 files = 20,000 files
export const FILES_PER_SKILL = 50;
export const COMMITS = 1_000;
const FILES_PER_LATER_COMMIT = 3;
export const TARGET = 42;
export const skillRepoName = (index: number) => `s${String(index).padStart(4, '0')}`;

const text = (id: number, size: number, head = '') => textContent('agentproto-bench-skill-providers', id, size, head);

/**
 * One skill's 50 paths: SKILL.md, 20 references, 15 scripts and 14 templates two levels
 * down (`assets/templates/`).
 */
function skillPaths(name: string): string[] {
  const paths = [`skills/${name}/SKILL.md`];
  for (let i = 0; i < 20; i++) paths.push(`skills/${name}/reference/r${String(i).padStart(2, '0')}.md`);
  for (let i = 0; i < 15; i++) paths.push(`skills/${name}/scripts/x${String(i).padStart(2, '0')}.sh`);
  for (let i = 0; i < 14; i++) paths.push(`skills/${name}/assets/templates/t${String(i).padStart(2, '0')}.txt`);
  if (paths.length !== FILES_PER_SKILL) throw new Error(`skill layout has ${paths.length} files`);
  return paths;
}

/** 1-8 KiB per file. */
function fileSize(next: () => number): number {
  return 1024 + (next() % (7 * 1024 + 1));
}

export function buildSkillRepoSpec(root: string) {
  const next = xorshift(26);
  let id = 0;
  const base: Record<string, Buffer> = {};
  for (let s = 0; s < SKILLS; s++) {
    const name = skillRepoName(s);
    for (const path of skillPaths(name)) {
      const head = path.endsWith('/SKILL.md')
        ? `---\nname: ${name}\ndescription: benchmark skill ${name}\n---\n\n`
        : '';
      base[path] = text(id++, fileSize(next), head);
    }
  }
  const commits: { message: string; files: Record<string, Buffer> }[] = [
    { message: 'skills: 400 skills', files: base },
  ];
  // 999 small commits, each rewriting a few files of other skills; the target skill never changes.
  for (let c = 1; c < COMMITS; c++) {
    const files: Record<string, Buffer> = {};
    while (Object.keys(files).length < FILES_PER_LATER_COMMIT) {
      const s = next() % SKILLS;
      if (s === TARGET) continue;
      const path = skillPaths(skillRepoName(s))[1 + (next() % (FILES_PER_SKILL - 1))]!;
      files[path] = text(id++, fileSize(next));
    }
    commits.push({ message: `update ${Object.keys(files).join(', ')}`, files });
  }
  return { root, name: 'skills.git', commits };
}
