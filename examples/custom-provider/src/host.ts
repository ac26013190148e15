// A host program: prepares the skills of a declaration file with the built-in git provider
// and the providers of the packages its configuration names, and prints each skill's
// directory. Run it from the deployment's folder, where the provider packages are installed:
//
//   cd examples/custom-provider
//   node --conditions=@agentproto/source --import tsx src/host.ts declaration.json \
//     --provider-package @agentproto/example-custom-provider [--store DIR]
//
// The host never imports a provider: `--provider-package` names a package (the deployment's
// choice), loadRegistry imports it and registers what it exports as `providers`. A
// declaration only names a provider id among those. Token values come from the environment
// variable of the secret's name; which names a declaration may use is the deployment's
// choice too (TARBALL_TOKEN_SECRET_NAMES for the tarball provider), never the declaration's.
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DOCUMENT_LIMITS, parseUntrustedJson, readBoundedFile } from '@agentproto/documents';
import { openContentStore } from '@agentproto/content-cache';
import {
  ProviderRegistrationError,
  SkillError,
  type SkillDeclaration,
  environmentSecrets,
  gitProvider,
  loadRegistry,
  prepareSkills,
} from '@agentproto/skill-providers';

const USAGE = 'usage: host.ts <declaration.json> [--provider-package SPEC]... [--store DIR]';

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { store: { type: 'string' }, 'provider-package': { type: 'string', multiple: true } },
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

  // The declaration is parsed like any document from a stranger: bounded in size, depth and values.
  // Typed by a cast: prepareSkills checks its shape at run time (the skills schema, then the parser).
  const declaration = parseUntrustedJson(await readBoundedFile(file, DOCUMENT_LIMITS.maxBytes, 'json'), {
    source: file,
  }) as SkillDeclaration[];
  const builtins = [gitProvider()];
  const packages = parsed.values['provider-package'] ?? [];
  const folder = process.cwd();
  let registry;
  try {
    // Packages are found where the deployment installed them: this folder's node_modules or
    // a parent's (loadRegistry's `from`, the working directory by default).
    registry = await loadRegistry({ providers: builtins, packages, from: folder });
  } catch (error) {
    if (!(error instanceof ProviderRegistrationError)) throw error;
    process.stderr.write(
      `error: ${error.code}: ${error.message}\n` +
        `hint: --provider-package names a package, found from ${folder}, that exports \`providers\`; the providers known without it: ${builtins.map((provider) => provider.id).join(', ')}\n`,
    );
    return 1;
  }
  // The store lives outside any workspace; the OS temp folder keeps the example self-contained.
  const cache = await openContentStore({
    root: resolve(parsed.values.store ?? join(tmpdir(), 'agentproto-example-skills')),
  });

  // Ctrl-C cancels: nothing half-fetched is published and the private folders are removed.
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));

  const skills = await prepareSkills(declaration, {
    cache,
    registry,
    secrets: environmentSecrets,
    signal: controller.signal,
  });
  for (const skill of skills) process.stdout.write(`${skill.name}\t${skill.dir}\t${skill.hit ? 'hit' : 'fetched'}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // A SkillError's message is written to hold no credential; anything else gets its message only.
    const text =
      error instanceof SkillError
        ? `${error.code}: ${error.message}`
        : error instanceof Error
          ? error.message
          : String(error);
    process.stderr.write(`error: ${text}\n`);
    process.exitCode = 1;
  },
);
