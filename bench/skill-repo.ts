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
function skillPaths(dir: string): string[] {
  const paths = [`${dir}/SKILL.md`];
  for (let i = 0; i < 20; i++) paths.push(`${dir}/reference/r${String(i).padStart(2, '0')}.md`);
  for (let i = 0; i < 15; i++) paths.push(`${dir}/scripts/x${String(i).padStart(2, '0')}.sh`);
  for (let i = 0; i < 14; i++) paths.push(`${dir}/assets/templates/t${String(i).padStart(2, '0')}.txt`);
  if (paths.length !== FILES_PER_SKILL) throw new Error(`skill layout has ${paths.length} files`);
  return paths;
}

/** 1-8 KiB per file. */
function fileSize(next: () => number): number {
  return 1024 + (next() % (7 * 1024 + 1));
}

/**
 * The big repository: 4,000 skills of 50 files (200,000 files of 128-640 bytes) in 40
 * groups, so a skill sits at depth 3 (`skills/g07/s0042`), and 1,000 commits as above.
 */
export const BIG_SKILLS = 4_000;
const BIG_GROUPS = 40;
export const bigSkillDir = (index: number) =>
  `skills/g${String(index % BIG_GROUPS).padStart(2, '0')}/${skillRepoName(index)}`;

export function buildBigSkillRepoSpec(root: string) {
  // One pool of text, each file a slice of it after a line naming the file: 200,000 calls
  // of textContent (a cipher each) would take most of a minute.
  const pool = textContent('agentproto-bench-skill-providers-big', 0, 4 * 1024 * 1024);
  const content = (id: number, size: number, head: string) => {
    const start = (id * 7919) % (pool.length - size);
    return Buffer.concat([Buffer.from(`${head}file ${id}\n`), pool.subarray(start, start + size)]);
  };
  return buildSpec(root, BIG_SKILLS, bigSkillDir, (next) => 128 + (next() % 513), 'big.git', content);
}

export function buildSkillRepoSpec(root: string) {
  return buildSpec(root, SKILLS, (s) => `skills/${skillRepoName(s)}`, fileSize, 'skills.git', text);
}

function buildSpec(
  root: string,
  skills: number,
  dirOf: (skill: number) => string,
  sizeOf: (next: () => number) => number,
  repoName: string,
  content: (id: number, size: number, head: string) => Buffer,
) {
  const next = xorshift(26);
  let id = 0;
  const base: Record<string, Buffer> = {};
  for (let s = 0; s < skills; s++) {
    const name = skillRepoName(s);
    for (const path of skillPaths(dirOf(s))) {
      const head = path.endsWith('/SKILL.md')
        ? `---\nname: ${name}\ndescription: benchmark skill ${name}\n---\n\n`
        : '';
      base[path] = content(id++, sizeOf(next), head);
    }
  }
  const commits: { message: string; files: Record<string, Buffer> }[] = [
    { message: `skills: ${skills} skills`, files: base },
  ];
  // 999 small commits, each rewriting a few files of other skills; the target skill never changes.
  for (let c = 1; c < COMMITS; c++) {
    const files: Record<string, Buffer> = {};
    while (Object.keys(files).length < FILES_PER_LATER_COMMIT) {
      const s = next() % skills;
      if (s === TARGET) continue;
      const path = skillPaths(dirOf(s))[1 + (next() % (FILES_PER_SKILL - 1))]!;
      files[path] = content(id++, sizeOf(next), '');
    }
    commits.push({ message: `update ${Object.keys(files).join(', ')}`, files });
  }
  return { root, name: repoName, commits };
}
