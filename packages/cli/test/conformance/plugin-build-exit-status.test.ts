import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { run } from '../support/run.js';
import { scratchFolders } from '../support/scratch.js';

// The rules these tests are built from (reference/agent-plugins/1.0.0/spec.md):
// §7.2.2 item 3: "If an individual server entry does not satisfy the requirements in §7.2.1,
//   the client MUST skip that server and continue loading other servers and component types.
//   The client SHOULD report the invalid entry."
// §11.3 item 4: "Clients SHOULD report invalid configuration and component failures."
// §7.2.1: "Plugins MUST NOT embed credentials or other secrets in `headers`."
// A build leaves out what a client would skip; the package it writes must still say so, or
// `build && validate --strict` in CI passes with a component missing (issue 12).

const scratch = scratchFolders();
const BIN = fileURLToPath(new URL('../../src/bin.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
/** The real bin in a child node, as a shell line runs it: node, the TypeScript source, argv. */
const AGENTPROTO = [process.execPath, '--conditions=@agentproto/source', '--import', TSX, BIN];
const shellWord = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** `sh -c line` with `agentproto` standing for the real bin; its exit status and output. */
function shell(line: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = `agentproto() { ${AGENTPROTO.map(shellWord).join(' ')} "$@"; }\n${line}`;
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', script], { cwd, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code =
        error === null
          ? 0
          : typeof (error as { code?: unknown }).code === 'number'
            ? (error as { code: number }).code
            : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

const SKILL = (name: string) => `---\nname: ${name}\ndescription: Does ${name}.\n---\n# ${name}\n`;
// A header value under a credential-like name: what the issue's plugin.toml shipped silently.
const API_KEY = 'k7Qm2ZpX9vR4tL8wN3bY6cJ1';

async function project(mcp: string): Promise<{ root: string; config: string }> {
  const root = await scratch();
  const files: Record<string, string> = {
    'plugin.toml': `[plugin]\nname = "acme.tools"\nversion = "1.0.0"\ninclude = ["bin/**"]\n\n[[plugin.mcp]]\nname = "local"\ncommand = "./bin/server"\n\n${mcp}`,
    'skills/review/SKILL.md': SKILL('review'),
    'bin/server': '#!/bin/sh\n',
  };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  await chmod(join(root, 'bin/server'), 0o755);
  return { root, config: join(root, 'plugin.toml') };
}

const WITH_SECRET = `[[plugin.mcp]]\nname = "remote"\ntransport = "http"\nurl = "https://mcp.example.com/mcp"\nheaders = { "X-Api-Key" = "${API_KEY}" }\n`;
const DISABLED = `[[plugin.mcp]]\nname = "later"\ncommand = "npx"\nenabled = false\n`;

describe('§7.2.2, §11.3: a build that leaves a component out says so, and so does the package it writes', () => {
  it('`agentproto plugin build && agentproto plugin validate --strict` fails when a server was left out (the real bin, through sh)', async () => {
    const { root } = await project(WITH_SECRET);
    const outcome = await shell(
      'agentproto plugin build plugin.toml --out dist && agentproto plugin validate dist --strict',
      root,
    );
    // build itself exits 1: the && stops there.
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(
      /^error AR9O2 secret\.embedded-rejected mcp\.json#\/mcpServers\/remote\/headers\/X-Api-Key: .*rule credential-name/m,
    );
    expect(outcome.stderr).toMatch(
      /^agentproto: PLUGIN_INCOMPLETE: .*dist: 1 configured part was left out \(AR9O2 secret\.embedded-rejected /m,
    );
    expect(outcome.stderr + outcome.stdout).not.toContain(API_KEY);
    // What a client loads was still written, without the server and without the secret.
    expect(JSON.parse(await readFile(join(root, 'dist/mcp.json'), 'utf8')).mcpServers).toEqual({
      local: { type: 'stdio', command: './bin/server' },
    });

    // Run on their own, validate --strict and verify both fail on the package: its record says what is missing.
    const after = await shell(
      'agentproto plugin validate dist --strict; echo "validate=$?"; agentproto plugin verify plugin.toml dist; echo "verify=$?"',
      root,
    );
    expect(after.stdout).toMatch(/^validate=2$/m);
    expect(after.stdout).toMatch(/^verify=1$/m);
    expect(after.stderr).toMatch(
      /^error AR9O4 package\.build-omitted mcp\.json#\/mcpServers\/remote\/headers\/X-Api-Key: was left out when the package was built \(secret\.embedded-rejected\)/m,
    );
    expect(after.stdout).toContain(
      'omitted  mcp.json#/mcpServers/remote/headers/X-Api-Key (secret.embedded-rejected)\n',
    );
    expect(after.stderr).toMatch(
      /^agentproto: PLUGIN_INCOMPLETE: .*dist is what .*plugin\.toml builds, but its build left out 1 part \(secret\.embedded-rejected /m,
    );
  });

  it('a complete build exits 0 and passes validate --strict and verify (the real bin)', async () => {
    const { root } = await project('');
    const outcome = await shell(
      'agentproto plugin build plugin.toml --out dist && agentproto plugin validate dist --strict && agentproto plugin verify plugin.toml dist',
      root,
    );
    expect(outcome).toMatchObject({ code: 0, stderr: '' });
    expect(outcome.stdout).toContain('dist: up to date\n');
    // Nothing left out, nothing recorded: the sidecar is what it always was.
    expect(JSON.parse(await readFile(join(root, 'dist/.agentproto-generated.json'), 'utf8'))).not.toHaveProperty(
      'omitted',
    );
  });

  it('build --json names what was left out and exits 1; --strict fails on a warning too, with exit 2', async () => {
    const { root, config } = await project(`${WITH_SECRET}\n${DISABLED}`);
    const json = await run(['plugin', 'build', config, '--out', join(root, 'a'), '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      written: true,
      omitted: [{ code: 'secret.embedded-rejected', path: 'mcp.json#/mcpServers/remote/headers/X-Api-Key' }],
    });

    const warningOnly = await project(DISABLED);
    expect((await run(['plugin', 'build', warningOnly.config, '--out', join(warningOnly.root, 'lenient')])).code).toBe(
      0,
    );
    const strict = await run([
      'plugin',
      'build',
      warningOnly.config,
      '--out',
      join(warningOnly.root, 'strict'),
      '--strict',
    ]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toMatch(
      /^agentproto: AR9O4: mcp\.server-disabled mcp\.json#\/mcpServers\/later: .*\(build --strict fails on any error or warning finding\)$/m,
    );
  });

  it('emit exits 1 when something was left out, records it in the emitted package, and --strict fails on a warning with exit 2', async () => {
    const { root, config } = await project(WITH_SECRET);
    const out = join(root, 'emitted');
    const emitted = await run(['plugin', 'emit', config, '--out', out]);
    expect(emitted.code).toBe(1);
    expect(emitted.stderr).toMatch(/^agentproto: PLUGIN_INCOMPLETE: .*emitted: 1 configured part was left out/m);
    expect(JSON.parse(await readFile(join(out, '.agentproto-generated.json'), 'utf8')).omitted).toEqual([
      { code: 'secret.embedded-rejected', path: 'mcp.json#/mcpServers/remote/headers/X-Api-Key' },
    ]);
    expect((await run(['plugin', 'validate', out, '--strict'])).code).toBe(2);

    const warningOnly = await project(DISABLED);
    expect((await run(['plugin', 'emit', warningOnly.config, '--out', join(warningOnly.root, 'lenient')])).code).toBe(
      0,
    );
    expect(
      (await run(['plugin', 'emit', warningOnly.config, '--out', join(warningOnly.root, 'strict'), '--strict'])).code,
    ).toBe(2);
  });

  // §7.2.2 item 3 on the reading side: the client skips the invalid entry. An import writes
  // the configuration a client's view of the package gives, so a skipped server is missing
  // from it; the command must not say "ok" about that.
  it('import exits 1 when a part a client skips was left out of the imported configuration, and --strict fails on a warning with exit 2', async () => {
    const { root, config } = await project(WITH_SECRET);
    expect((await run(['plugin', 'build', config, '--out', join(root, 'dist')])).code).toBe(1);
    const imported = await run(['plugin', 'import', join(root, 'dist'), '--out', join(root, 'imported')]);
    expect(imported.code).toBe(1);
    expect(imported.stderr).toMatch(
      /^agentproto: PLUGIN_INCOMPLETE: .*imported: the import left out what a conformant client skips \(AR9O4 package\.build-omitted mcp\.json#\/mcpServers\/remote\/headers\/X-Api-Key\)/m,
    );
    // The folder is written all the same: what a client loads.
    expect(JSON.parse(await readFile(join(root, 'imported/plugin.config.json'), 'utf8'))).toHaveProperty('mcp');

    const complete = await project('');
    await run(['plugin', 'build', complete.config, '--out', join(complete.root, 'dist')]);
    expect(
      await run([
        'plugin',
        'import',
        join(complete.root, 'dist'),
        '--out',
        join(complete.root, 'imported'),
        '--strict',
      ]),
    ).toMatchObject({ code: 0, stderr: '' });

    // A package written by someone else, with a literal secret in a server's env: a client
    // loads the server (a warning on read), so the import is whole, but --strict refuses it.
    const mcpFile = join(complete.root, 'dist/mcp.json');
    const mcp = JSON.parse(await readFile(mcpFile, 'utf8'));
    mcp.mcpServers.local.env = { API_KEY };
    await writeFile(mcpFile, JSON.stringify(mcp));
    const lenient = await run([
      'plugin',
      'import',
      join(complete.root, 'dist'),
      '--out',
      join(complete.root, 'lenient'),
    ]);
    expect(lenient.code).toBe(0);
    expect(lenient.stderr).toMatch(/^warning .*secret\.embedded mcp\.json#\/mcpServers\/local\/env\/API_KEY/m);
    const strict = await run([
      'plugin',
      'import',
      join(complete.root, 'dist'),
      '--out',
      join(complete.root, 'strict'),
      '--strict',
    ]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toMatch(/secret\.embedded .*\(import --strict fails on any error or warning finding\)$/m);
    expect(strict.stderr + lenient.stderr).not.toContain(API_KEY);
  });
});
