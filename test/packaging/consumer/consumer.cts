// A CommonJS consumer under `module: nodenext`: `import x = require()` takes the types from the
// package's `require` condition (dist/index.d.cts). Each `@ts-expect-error` proves a function is typed.
import contentCache = require('@agentproto/content-cache');
import git = require('@agentproto/git');
import aip26 = require('@agentproto/aip-26');
import skillProviders = require('@agentproto/skill-providers');
import agentPlugins = require('@agentproto/agent-plugins');
import cli = require('@agentproto/cli');
import archive = require('@agentproto/archive');
import oci = require('@agentproto/oci');
import documents = require('@agentproto/documents');
import fsInside = require('@agentproto/fs-inside');
import sandbox = require('@agentproto/sandbox');
import aip17 = require('@agentproto/aip-17');

const key: contentCache.CacheKey = {
  provider: 'local',
  declaration: { path: contentCache.defaultCacheRoot({ XDG_CACHE_HOME: '/srv/cache' }, '/home/user') },
  version: 'v1',
  contentId: 'sha256:0',
};
// @ts-expect-error: the environment is a record of strings
contentCache.defaultCacheRoot(42);

const head: git.RemoteRef = { name: 'HEAD', oid: 'a'.repeat(40) };
const pinned: boolean = git.isFullCommitId(head.oid);
// @ts-expect-error: a commit id is a string
git.isFullCommitId(40);

const words: aip26.Words = aip26.splitWords('node tool.js --verbose');
const program: string | undefined = words.ok ? words.words[0] : words.reason;

const skill: skillProviders.SkillSource = skillProviders.parseGitString(
  'https://github.com/acme/skills.git@v1.4.0#skills/review',
);
const problem: string | undefined = agentPlugins.pluginNameProblem(skill.name);
const severity = (finding: agentPlugins.Finding): 'error' | 'warning' | 'info' => finding.severity;

const io: cli.CliIO = { stdout: process.stdout, stderr: process.stderr };
const exitCode: Promise<number> = cli.main(['--version'], io);
// @ts-expect-error: argv is an array of strings
cli.main('--version', io);

const segments: string[] = archive.safeEntrySegments('./skills//review/SKILL.md');
const artifact: oci.ArtifactReference = oci.parseReference('ghcr.io/acme/plugin:1.0.0');
const json: documents.JsonParseOptions = { source: 'plugin.json' };
const parsed: unknown = documents.parseUntrustedJson('{"name":"review"}', json);
const realRoot: string = fsInside.realRootOf('/');
// @ts-expect-error: a root is a path string
fsInside.realRootOf(0);
const account: number = sandbox.defaultRunAs().uid;
const timeout: number = aip17.defineRunner({ limits: { timeout_ms: 1000 } }).limits.timeout_ms;
// @ts-expect-error: the engine is one of three
aip17.defineRunner({ engine: 'docker' });

export = { key, pinned, program, problem, severity, exitCode, segments, artifact, parsed, realRoot, account, timeout };
