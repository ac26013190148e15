// A host program: prepares the skills of a declaration file with the git provider and the
// tarball provider, and prints each skill's directory.
//
//   node --conditions=@agentproto/source --import tsx examples/custom-provider/src/host.ts \
//     declaration.json [--cache DIR] [--token-secret-name NAME]...
//
// Token values come from the environment variable of the secret's name; which names a
// declaration may use is the host's choice (--token-secret-name), never the declaration's.
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { openContentStore } from '@agentproto/content-cache';
import { SkillError, createRegistry, environmentSecrets, gitProvider, prepareSkills } from '@agentproto/skill-providers';
import { tarballProvider } from './index.js';

const USAGE = 'usage: host.ts <declaration.json> [--cache DIR] [--token-secret-name NAME]...';

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { cache: { type: 'string' }, 'token-secret-name': { type: 'string', multiple: true } },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const [file, ...extra] = parsed.positionals;
  if (file === undefined || extra.length > 0) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }

  const declaration: unknown = JSON.parse(await readFile(file, 'utf8'));
  // The store lives outside any workspace; the OS temp folder keeps the example self-contained.
  const cache = await openContentStore({ root: resolve(parsed.values.cache ?? join(tmpdir(), 'agentproto-example-skills')) });
  const registry = createRegistry([gitProvider(), tarballProvider({ tokenSecretNames: parsed.values['token-secret-name'] ?? [] })]);

  // Ctrl-C cancels: nothing half-fetched is published and the private folders are removed.
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));

  const skills = await prepareSkills(declaration, { cache, registry, secrets: environmentSecrets, signal: controller.signal });
  for (const skill of skills) process.stdout.write(`${skill.name}\t${skill.dir}\t${skill.hit ? 'hit' : 'fetched'}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // A SkillError's message is written to hold no credential; anything else gets its message only.
    const text = error instanceof SkillError ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error);
    process.stderr.write(`error: ${text}\n`);
    process.exitCode = 1;
  },
);
