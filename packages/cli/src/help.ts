import { defaultCacheRoot } from '@agentproto/content-cache';
import { shellQuote } from './format.js';

/** The command groups: `agentproto <group> <subcommand> …`. */
const GROUPS = ['cache', 'code', 'skills', 'plugin'] as const;
export type Group = (typeof GROUPS)[number];

export function isGroup(value: string | undefined): value is Group {
  return (GROUPS as readonly (string | undefined)[]).includes(value);
}

/** The line a wrong command line ends with, instead of the whole help. */
export function helpPointer(group: Group | undefined): string {
  return `Run 'agentproto ${group === undefined ? '' : `${group} `}--help' for usage.`;
}

const OUTPUT_OPTIONS = `  --json            print one JSON document on stdout (no colour, no progress on stderr)
  --verbose         with an error, print the chain of errors that caused it
  -h, --help        show this help`;

const REGISTRY_CREDENTIALS = `Registry credentials come from the environment only, never from an option:
AGENTPROTO_REGISTRY_USERNAME and AGENTPROTO_REGISTRY_PASSWORD (HTTP Basic, or the token
service of a bearer registry), or AGENTPROTO_REGISTRY_TOKEN (a bearer token).`;

const REMOTE_TIER = `  --remote URL      share the store through an OCI registry, https://host[:port]: a miss
                    asks it before the origin, what is fetched is pushed; its failures
                    are warnings on stderr
  --repository NAME  with --remote: the repository in it (e.g. team/cache)
  --insecure-http   with --remote: allow a plain http registry`;

/** `agentproto --help`: one line per command group, a few examples, and where to read more. */
export function overview(): string {
  return `Usage: agentproto <command> <subcommand> [options]

Commands:
  cache    the content cache: put, ls, verify, gc, push, pull
  code     AIP-26 code bundles: check, bundle, run
  skills   skill declarations: resolve, prepare
  plugin   Agent Plugins packages: build, validate, verify, import, emit, explain, push, pull

Examples:
  agentproto cache put ./my-skill --name my-skill
  agentproto skills prepare skills.yaml
  agentproto plugin validate dist/acme.tools --strict
  agentproto help plugin

Options:
${OUTPUT_OPTIONS}
  --version         print the version

Exit status: 0 done, 1 problems found, 2 wrong command line or a --strict failure.
Run 'agentproto <command> --help' for a command's subcommands, options and examples.
`;
}

/** `agentproto <group> --help`: that group's subcommands, options, examples and exit statuses. */
export function groupHelp(group: Group): string {
  return GROUP_HELP[group]();
}

const GROUP_HELP: Readonly<Record<Group, () => string>> = {
  cache: () => `Usage: agentproto cache <subcommand> [options]

Store folders in the content cache, keyed by their tree digest, and share them through an
OCI registry.

Subcommands:
  put <dir>         store a local folder, keyed by its tree digest
  ls                list stored objects and the keys that reach them
  verify            re-hash every object against its marker; exit 1 if one is corrupt
  gc                remove objects, keys and links that nothing reaches
  push              push every key of the store to an OCI registry (--remote, --repository)
  pull              acquire every key the registry lists into the store, from the
                    registry only

Options:
  --root DIR        the store (default: ${shellQuote(defaultCacheRoot())})
  --provider ID     put: the provider recorded in the key (default: local)
  --name NAME       put: declare the folder as {"name": NAME} instead of its path
  --quarantine      verify: move corrupt objects to quarantine/ and drop their keys
  --remote URL      push, pull: the OCI registry, https://host[:port]
  --repository NAME  push, pull: the repository in it (e.g. team/cache)
  --insecure-http   push, pull: allow a plain http registry
${OUTPUT_OPTIONS}

${REGISTRY_CREDENTIALS}

Examples:
  agentproto cache put ./my-skill --name my-skill
  agentproto cache ls --root /tmp/agentproto-store
  agentproto cache verify --quarantine
  agentproto cache push --remote https://registry.example.com --repository team/cache

Exit status:
  0  done; verify: every object is intact
  1  problems found: a corrupt object (verify), a key that failed (push, pull), or an error
  2  wrong command line
`,

  code: () => `Usage: agentproto code <check|bundle|run> <manifest> [options]

Check, bundle and run the code of an AIP-26 manifest (JSON or YAML), or of a lean
CODE.md (schema: code/v2; its paths are relative to its folder).

Subcommands:
  check <manifest>  check its code and run blocks; resolve every source; the run
                    file must be in the bundle
  bundle <manifest>  build its deterministic tar.gz (--out FILE); refused when the run
                    file is not in it
  run <manifest>    build it and run it locally, with only PATH and --env KEY=VALUE

Options:
  --workspace DIR   the workspace (default: the manifest's folder)
  --out FILE        bundle: where the tar.gz goes
  --env KEY=VALUE   run: a variable for the program (repeatable)
  --github-url URL  the git host of github sources (default https://github.com);
                    a token is read from GITHUB_TOKEN
  --cache-root DIR  where fetched github sources are cached
                    (default: ${shellQuote(defaultCacheRoot())})
${REMOTE_TIER}
${OUTPUT_OPTIONS}

Examples:
  agentproto code check tool.yaml
  agentproto code bundle tool.yaml --out tool.tar.gz
  agentproto code run tool.yaml --env GREETING=hello
  agentproto code run .code/notion-search/CODE.md

Exit status:
  0  done; run: the program exited 0
  1  problems found: an invalid manifest, a source that does not resolve, or a program
     that exited non-zero or timed out (run)
  2  wrong command line
`,

  skills: () => `Usage: agentproto skills <resolve|prepare> <declaration> [options]

Resolve and fetch the skills a declaration lists: a JSON or YAML file holding the skills
array, or an object with a "skills" array.

Subcommands:
  resolve <declaration>  resolve every skill to a commit and content id, authorizing each;
                    say which are cached
  prepare <declaration>  resolve, fetch what is missing, and print each skill's directory

Options:
  --cache DIR       the store (default: ${shellQuote(defaultCacheRoot())})
  --vault FILE      HTTP Basic credentials, {"<url prefix>": {"username": …,
                    "passwordEnv": "<variable holding the password>"}}
  --local-root DIR  allow the local provider for folders under DIR (repeatable)
  --provider-package SPEC  load skill providers from an installed package (repeatable)
${REMOTE_TIER}
${OUTPUT_OPTIONS}

Deploy keys: named in AGENTPROTO_DEPLOY_KEY_SECRET_NAMES, read from the environment
variable of that name.

Examples:
  agentproto skills resolve skills.yaml
  agentproto skills prepare skills.yaml --cache /tmp/agentproto-store
  agentproto skills prepare skills.yaml --vault vault.json --json

Exit status:
  0  done
  1  problems found: an entry that does not resolve, authorize or fetch, or an
     unreadable declaration
  2  wrong command line
`,

  plugin: () => `Usage: agentproto plugin <subcommand> [options]

Build, check and share Agent Plugins packages (plugin.json, skills/, mcp.json).

Subcommands:
  build <config>    build the package a configuration (TOML/YAML/JSON) describes and
                    write it to --out DIR; findings on stderr; exit 1 when anything
                    configured was left out (the package records it for verify)
  validate <dir>    load a package as a conformant client does; exit 1 if rejected
  verify <config> <dir>  exit 1 when the folder is not what the configuration builds,
                    or its build left something out
  import <dir>      write its content root and plugin.config.json to --out DIR;
                    exit 1 when a part a client skips was left out
  emit <config>     write a clean package to --out DIR, read back and built again
  explain <code>    print an AR9O rule or what a finding code means
  push <dir> <ref>  push the folder's clean package as an OCI artifact to
                    host[:port]/repository:tag; refused before upload on an error finding
  pull <ref> <dir>  pull an artifact (…:tag or …@sha256:…), verify its digests, extract
                    it safely and validate it; <dir> must be absent or empty

Options:
  --out DIR         build, import, emit: the folder to write
  --spec VERSION    build, verify, emit: the Agent Plugins version, 1.0.0 or 1.1.0
                    (default: the configuration's spec, else 1.0.0)
  --replace         build, import, emit: replace a non-empty --out folder
  --strict          validate: exit 2 on the first error finding, naming its code;
                    build, emit, import: exit 2 on the first error or warning finding
  --explain CODE    validate: print the rule of CODE instead of validating
  --insecure-http   push, pull: allow a plain http registry
${OUTPUT_OPTIONS}

${REGISTRY_CREDENTIALS}

Examples:
  agentproto plugin build plugin.toml --out dist/acme.tools
  agentproto plugin validate dist/acme.tools --strict
  agentproto plugin explain AR9O3
  agentproto plugin push dist/acme.tools registry.example.com/team/acme-tools:1.2.0

Exit status:
  0  done
  1  problems found: a plugin rejected, a build or emit that left something configured
     out, a folder that drifted or lacks a component (verify), a push or pull refused,
     or an error
  2  wrong command line, validate --strict found an error finding, or build/emit
     --strict found an error or warning finding
`,
};
