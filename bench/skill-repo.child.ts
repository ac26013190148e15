/**
 * Builds one of the skill benchmarks' repositories (`20k` or `200k`) under the folder given,
 * in a process of its own: the measuring process never holds the generated content (100 MiB
 * and more of buffers), whose heap and resident size would otherwise weigh on every process
 * it starts. Prints what the repository is and how long building took, and checks it.
 */
import { performance } from 'node:perf_hooks';
import { makeRepo, run } from '@agentproto/testkit';
import {
  BIG_SKILLS,
  COMMITS,
  FILES_PER_SKILL,
  SKILLS,
  buildBigSkillRepoSpec,
  buildSkillRepoSpec,
} from './skill-repo.ts';

const [label, reposRoot] = process.argv.slice(2);
if ((label !== '20k' && label !== '200k') || reposRoot === undefined)
  throw new Error('usage: skill-repo.child.ts 20k|200k <folder>');
const [make, skills] = label === '20k' ? [buildSkillRepoSpec, SKILLS] : [buildBigSkillRepoSpec, BIG_SKILLS];
const start = performance.now();
const spec = make(reposRoot);
const generated = performance.now();
console.log(`repository ${label}: content generated in ${((generated - start) / 1000).toFixed(2)} s`);
const repo = await makeRepo(spec);
const built = performance.now();
const fileCount = (await repo.git('ls-tree', '-r', '--name-only', 'main')).split('\n').filter(Boolean).length;
const commitCount = Number((await repo.git('rev-list', '--count', 'main')).trim());
const repoKiB = Number((await run('du', ['-sk', repo.path])).stdout.split('\t')[0]);
console.log(
  `repository ${label}: ${fileCount} files, ${commitCount} commits, ${(repoKiB / 1024).toFixed(1)} MiB on disk; makeRepo (blob pack + one fast-import) ${((built - generated) / 1000).toFixed(2)} s`,
);
if (fileCount !== skills * FILES_PER_SKILL || commitCount !== COMMITS)
  throw new Error(`the repository ${label} is not the one specified`);
