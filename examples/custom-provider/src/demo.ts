// The example end to end, on this machine only: a skill pack published as a .tar.gz, served
// on 127.0.0.1 behind a bearer token, and prepared twice by the host program, which loads
// the tarball provider by package name; then the agentproto CLI on the same declaration.
//
//   npx -y pnpm@12.4.2 --filter @agentproto/example-custom-provider start
//
// Everything is made under one folder in the OS temp folder and removed at the end.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { servePack } from './demo/pack-server.js';
import { publishSkillPack } from './demo/skill-pack.js';

const run = promisify(execFile);
/** The deployment's folder: the provider package is found from here by its name. */
const packageDir = resolve(fileURLToPath(new URL('..', import.meta.url)));
const PACKAGE = '@agentproto/example-custom-provider';
const CLI = fileURLToPath(new URL('../../../packages/cli/src/bin.ts', import.meta.url));
const NODE_ARGS = ['--conditions=@agentproto/source', '--import', 'tsx'];
const TOKEN_SECRET = 'ACME_SKILLS_TOKEN';

const PACK_FILES = {
  'skills/review/SKILL.md':
    '---\nname: review\ndescription: Reviews a change against the team checklist.\n---\n# Review\n\nRead the diff, then go through checklist.md item by item.\n',
  'skills/review/checklist.md': '- tests name the rule they check\n- no secret in a message\n',
  'skills/release-notes/SKILL.md':
    '---\nname: release-notes\ndescription: Drafts release notes from merged changes.\n---\n# Release notes\n\nGroup the changes by package; one line each.\n',
  'skills/release-notes/scripts/changes.sh': '#!/bin/sh\ngit log --oneline "$1..HEAD"\n',
};

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'agentproto-custom-provider-demo-'));
  // The token is made up for this run, and shown nowhere: it reaches the host as the
  // value of the environment variable the declaration names.
  const token = randomBytes(16).toString('hex');
  let server;
  try {
    await mkdir(join(root, 'publish'));
    const published = await publishSkillPack(
      join(root, 'publish', 'acme-skills-1.0.0.tar.gz'),
      'acme-skills-1.0.0',
      PACK_FILES,
    );
    server = await servePack(published.file, token);
    say(
      `1. a skill pack, published: ${published.file} (${Object.keys(PACK_FILES).length} files, ${published.bytes} bytes)`,
    );
    say(`   ${published.pin}`);
    say(`   served at ${server.url} (127.0.0.1 only; a bearer token is required)\n`);

    const declaration = ['review', 'release-notes'].map((name) => ({
      provider: 'tarball',
      source: server!.url,
      version: published.pin,
      path: `${published.top}/skills/${name}`,
      name,
      config: { token_secret_name: TOKEN_SECRET },
    }));
    const declarationFile = join(root, 'declaration.json');
    await writeFile(declarationFile, `${JSON.stringify(declaration, null, 2)}\n`);
    say(`2. the declaration, pinned by the pack's SHA-256 (${declarationFile}):`);
    say(indent(JSON.stringify(declaration, null, 2)));

    // What the deployment decides: which package provides providers (on the host's command
    // line), which secret names a declaration may use, and the secret's value.
    const store = join(root, 'store');
    const hostArgs = ['src/host.ts', declarationFile, '--provider-package', PACKAGE, '--store', store];
    const env = { ...process.env, TARBALL_TOKEN_SECRET_NAMES: TOKEN_SECRET, [TOKEN_SECRET]: token };
    say('\n3. the host, loading the provider by package name, from', packageDir);
    say(
      `   $ TARBALL_TOKEN_SECRET_NAMES=${TOKEN_SECRET} ${TOKEN_SECRET}=<the token> node ${NODE_ARGS.join(' ')} ${hostArgs.join(' ')}`,
    );
    const first = await host(hostArgs, env);
    for (const skill of first) {
      say(`   ${skill.name}  ${skill.how}  ${skill.dir}`);
      say(`     files: ${(await filesIn(skill.dir)).join(', ')}`);
      say(`     SKILL.md:`);
      say(indent(await readFile(join(skill.dir, 'SKILL.md'), 'utf8'), 8).trimEnd());
    }
    say(`   the server saw ${server.count('HEAD')} HEAD and ${server.count('GET')} GET requests\n`);

    const [heads, gets] = [server.count('HEAD'), server.count('GET')];
    say('4. the same command again: every skill is a hit');
    for (const skill of await host(hostArgs, env)) say(`   ${skill.name}  ${skill.how}  ${skill.dir}`);
    say(
      `   the server saw ${server.count('HEAD') - heads} HEAD (each preparation checks the token) and ${server.count('GET') - gets} GET requests (nothing downloaded)\n`,
    );

    await cli(declarationFile, store, env);
  } finally {
    await server?.close();
    await rm(root, { recursive: true, force: true });
  }
  say(`\nremoved ${root}`);
}

interface HostLine {
  name: string;
  dir: string;
  how: string;
}

/** Runs src/host.ts from the package folder, whose name the provider package is found by. */
async function host(args: string[], env: NodeJS.ProcessEnv): Promise<HostLine[]> {
  const { stdout } = await run(process.execPath, [...NODE_ARGS, ...args], {
    cwd: packageDir,
    env,
    timeout: 120_000,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`the host failed:\n${error.stderr || error.message}`);
  });
  return stdout
    .trim()
    .split('\n')
    .map((line) => {
      const [name = '', dir = '', how = ''] = line.split('\t');
      return { name, dir, how };
    });
}

/**
 * The agentproto CLI on the same declaration and store, naming the provider package the
 * same way: the CLI finds it from its working directory, this example's folder.
 */
async function cli(declarationFile: string, store: string, env: NodeJS.ProcessEnv): Promise<void> {
  if (!existsSync(CLI)) {
    say(`5. the agentproto CLI: skipped, ${CLI} is not here`);
    return;
  }
  const args = ['skills', 'prepare', declarationFile, '--provider-package', PACKAGE, '--store', store];
  say('5. the agentproto CLI, same declaration, same store: hits');
  say(`   $ agentproto ${args.join(' ')}`);
  const { stdout } = await run(process.execPath, [...NODE_ARGS, CLI, ...args], {
    cwd: packageDir,
    env,
    timeout: 120_000,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`the CLI failed:\n${error.stderr || error.message}`);
  });
  say(indent(stdout.trimEnd(), 3));
}

/** The files under `dir`, relative to it, sorted. */
async function filesIn(dir: string, prefix = ''): Promise<string[]> {
  // Walked by hand: readdir's `recursive` needs Node 20.1, and the example supports 20.0.
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) files.push(...(await filesIn(join(dir, entry.name), `${prefix}${entry.name}/`)));
    else files.push(`${prefix}${entry.name}`);
  }
  return files.sort();
}

function say(...parts: string[]): void {
  process.stdout.write(`${parts.join(' ')}\n`);
}

function indent(text: string, by = 3): string {
  return text.replace(/^/gm, ' '.repeat(by));
}

main().catch((error: unknown) => {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
