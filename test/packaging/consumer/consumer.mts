// An ESM consumer under `module: nodenext`: each import takes its types from the package's
// `import` condition (dist/index.d.ts). Each `@ts-expect-error` proves a function is typed, not `any`.
import { type CacheKey, type StoredTree, defaultCacheRoot } from '@agentproto/content-cache';
import { type RemoteRef, isFullCommitId } from '@agentproto/git';
import { type Words, splitWords } from '@agentproto/aip-26';
import { type SkillSource, parseGitString } from '@agentproto/skill-providers';
import { type Finding, pluginNameProblem } from '@agentproto/agent-plugins';
import { type CliIO, EXIT_OK, main } from '@agentproto/cli';
import { safeEntrySegments } from '@agentproto/archive';
import { type ArtifactReference, parseReference } from '@agentproto/oci';
import { type JsonParseOptions, parseUntrustedJson } from '@agentproto/documents';
import { realRootOf } from '@agentproto/fs-inside';
import { type ProcessLimits, defaultRunAs } from '@agentproto/sandbox';
import { type RunnerHandle, defineRunner } from '@agentproto/aip-17';

const root: string = defaultCacheRoot({ XDG_CACHE_HOME: '/srv/cache' }, '/home/user');
const key: CacheKey = { provider: 'local', declaration: { path: root }, version: 'v1', contentId: 'sha256:0' };
export const reused = (tree: StoredTree): boolean => tree.fromCache && tree.source === 'store';
// @ts-expect-error: the environment is a record of strings
defaultCacheRoot(42);

const head: RemoteRef = { name: 'HEAD', oid: 'a'.repeat(40), symref: 'refs/heads/main' };
export const pinned: boolean = isFullCommitId(head.oid);
// @ts-expect-error: a commit id is a string
isFullCommitId(40);

const words: Words = splitWords('node tool.js --verbose');
export const program: string | undefined = words.ok ? words.words[0] : words.reason;
// @ts-expect-error: a run line is a string
splitWords(['node']);

const skill: SkillSource = parseGitString('https://github.com/acme/skills.git@v1.4.0#skills/review');
export const where: string = `${skill.provider}:${skill.source}@${skill.version}#${skill.path} (${key.provider})`;
// @ts-expect-error: parseGitString takes the declaration string
parseGitString({ url: skill.source });

export const problem: string | undefined = pluginNameProblem(skill.name);
export const severity = (finding: Finding): 'error' | 'warning' | 'info' => finding.severity;
// @ts-expect-error: the result is string | undefined, never a number
export const wrong: number = pluginNameProblem('my-plugin');

const io: CliIO = { stdout: process.stdout, stderr: process.stderr };
export const ok: boolean = (await main(['--version'], io)) === EXIT_OK;
// @ts-expect-error: argv is an array of strings
await main('--version', io);

export const segments: string[] = safeEntrySegments('./skills//review/SKILL.md');
// @ts-expect-error: an entry name is a string
safeEntrySegments(['skills']);

const artifact: ArtifactReference = parseReference('ghcr.io/acme/plugin:1.0.0');
export const tag: string | undefined = artifact.tag;
// @ts-expect-error: a reference is a string
parseReference({ registry: artifact.registry });

const json: JsonParseOptions = { source: 'plugin.json' };
export const parsed: unknown = parseUntrustedJson('{"name":"review"}', json);
// @ts-expect-error: the options name the document's source
parseUntrustedJson('{}');

export const realRoot: string = realRootOf('/');
// @ts-expect-error: a root is a path string
realRootOf(0);

export const account: number = defaultRunAs().uid;
export const caps: ProcessLimits = { memoryMb: 256, cpuMs: 30_000 };
// @ts-expect-error: a memory cap is a number of MiB
export const badCaps: ProcessLimits = { memoryMb: '256' };

const handle: RunnerHandle = defineRunner({ engine: 'subprocess', limits: { timeout_ms: 1000 } });
export const timeout: number = handle.limits.timeout_ms;
// @ts-expect-error: the engine is one of three
defineRunner({ engine: 'docker' });
