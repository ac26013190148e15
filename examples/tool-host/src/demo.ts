// The whole host in one command, with no network: a local stand-in for GitHub, a tool
// registered from it, a broken manifest refused, and the tool run.
//
//   npx -y pnpm@12.4.2 --filter @agentproto/example-tool-host start
//
// The stand-in is @agentproto/testkit's git server: `git http-backend` on 127.0.0.1
// serving a bare repository built on the spot. It is NOT github.com; the github connector
// speaks git smart HTTP, so it cannot tell the difference. Everything is made under the OS
// temp folder and removed at the end.
import { mkdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeRepo, startGitHttpServer } from '@agentproto/testkit';
import { ToolRefusedError } from './errors.js';
import { describeProblems, describeTool } from './format.js';
import { openToolHost } from './tool-host.js';

const TOOL_FILES = {
  'package.json': '{ "name": "hello-tool", "version": "1.0.0" }\n',
  'tool.js': [
    "const fs = require('node:fs');",
    "const { greeting } = JSON.parse(fs.readFileSync('config.json', 'utf8'));",
    "const { version } = JSON.parse(fs.readFileSync('package.json', 'utf8'));",
    "console.log(`${greeting}, ${process.env.WHO ?? 'world'}! (hello-tool ${version})`);",
    '',
  ].join('\n'),
};

async function main(): Promise<void> {
  const root = join(tmpdir(), `agentproto-tool-host-demo-${process.pid}`);
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  const repos = join(root, 'github-stand-in');
  const githubStandIn = await startGitHttpServer({ root: repos });
  try {
    const repo = await makeRepo({
      root: repos,
      name: 'acme/hello-tool.git',
      commits: [{ message: 'hello-tool 1.0.0', files: TOOL_FILES }],
      tags: [{ name: 'v1.0.0', target: 0, annotated: true }],
    });
    say(`GitHub stand-in (local git server, not github.com): ${githubStandIn.url}`);
    say(`  acme/hello-tool: tag v1.0.0 → ${repo.commits[0]}\n`);

    const workspace = join(root, 'workspace');
    await mkdir(workspace);
    const host = await openToolHost({ stateDir: join(root, 'host-state'), githubUrl: githubStandIn.url });

    const manifest = {
      name: 'hello',
      description: 'Greets, from a tagged release and an inline config.',
      code: {
        sources: [
          { github: { repo: 'acme/hello-tool', ref: 'v1.0.0' } },
          { inline: { path: 'config.json', content: '{ "greeting": "Hello" }\n' } },
        ],
      },
      run: 'tool.js',
      runner: { limits: { timeout_ms: 10_000 } },
    };
    say("1. register a manifest: every source is resolved, the tag's commit recorded");
    say(indent(JSON.stringify(manifest)));
    say(describeTool(await host.register(manifest, { workspaceRoot: workspace }), host.registry.file));

    const broken = {
      name: 'broken',
      code: {
        sources: [
          { github: { repo: 'acme/hello-tool', ref: 'v1.0.0' } },
          { local: '../../etc/passwd' },
          { github: { repo: 'acme/hello-tool', ref: 'no-such-branch' } },
        ],
      },
      run: 'tool.js',
    };
    say('2. register a broken manifest: refused before anything runs, every bad source named');
    say(indent(JSON.stringify(broken)));
    try {
      await host.register(broken, { workspaceRoot: workspace });
      throw new Error('the broken manifest was registered');
    } catch (error) {
      if (!(error instanceof ToolRefusedError)) throw error;
      say(`${error.code}: ${error.message}\n${describeProblems(error.problems)}`);
    }

    say('3. run the registered tool: the bundle is materialized and started by the subprocess runner');
    const result = await host.run('hello', { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', WHO: 'tool host' } });
    say(
      `${indent(result.stdout.toString().trimEnd())}\n  exit ${result.exitCode}, bundle sha256 ${result.bundleSha256}\n`,
    );

    say(`4. the registry (${host.registry.file}):`);
    const registry = JSON.parse(await readFile(host.registry.file, 'utf8')) as {
      tools: Record<string, { sources: unknown[] }>;
    };
    say(indent(JSON.stringify(registry.tools.hello!.sources, null, 2)));
  } finally {
    await githubStandIn.close();
    await rm(root, { recursive: true, force: true });
  }
}

function say(text: string): void {
  process.stdout.write(`${text}\n`);
}

function indent(text: string): string {
  return text.replace(/^/gm, '    ');
}

main().catch((error: unknown) => {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
