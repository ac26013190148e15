import type { Terminal } from './terminal.js';
import { UsageError } from './usage.js';

/**
 * The one description of the `agentproto` command line: every group, subcommand, positional
 * and option. The parser, the help, "did you mean" and the completion scripts are all made
 * from it, so none of them can disagree with another. It imports no command's code: a group's
 * module is loaded by `load` only when one of its subcommands runs.
 */

/**
 * What a path argument must be before a command runs: `file` and `folder` exist and are one;
 * `new-file` may be absent but its folder exists; `new-folder` may be absent (it is made with
 * its parents) but nothing on its way is a file; if they exist, they are a file or a folder.
 * A `store` is checked as a new folder on its way only: the store itself says what is wrong
 * with the folder (CACHE_ROOT_UNUSABLE).
 */
export type PathKind = 'file' | 'folder' | 'new-file' | 'new-folder' | 'store';

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** Repeatable: the values are a list, in order. */
  multiple?: true;
  /** The value's name in help: DIR, FILE, URL. */
  placeholder?: string;
  /** One line (wrapped by the help); by subcommand when it means something else for each. */
  description: string | Readonly<Record<string, string>>;
  path?: PathKind;
  /** The only values it takes. */
  choices?: readonly string[];
}

interface PositionalSpec {
  /** Its name in help, without brackets: `manifest`, `dir`. */
  name: string;
  /** What it is, in a usage error: "a plugin folder". */
  what: string;
  path?: PathKind;
  /** May be left out (the command says when it is needed); help shows it as `[name]`. */
  optional?: true;
  /** How help shows it, when not as the rule above says (`<dir>`: needed but for --explain). */
  shown?: string;
  /** The last positional only: it takes one or more arguments, in order; help shows `<name>...`. */
  variadic?: true;
  /** What completion offers for it when the parser does not check it as a path (`path`). */
  completes?: PathKind;
}

export interface SubcommandSpec {
  summary: string;
  positionals: readonly PositionalSpec[];
  /** The names of the group's options it takes; --json, --verbose and --help go without saying. */
  options: readonly string[];
  /** The options it cannot run without: `needs --out DIR` when one is missing. */
  required?: readonly string[];
  /** A rule across options, checked with the rest of the command line, before any path is. */
  check?: (invocation: Invocation) => void;
  examples: readonly string[];
}

/** A command line the table accepted, given to the group's code. */
export interface Invocation {
  group: string;
  sub: string;
  /** Each option given, by name: a string, a list for a repeatable one, true for a flag. */
  values: Readonly<Record<string, string | string[] | true | undefined>>;
  positionals: readonly string[];
}

type RunGroup = (invocation: Invocation, term: Terminal) => Promise<number>;

export interface GroupSpec {
  /** One line in the overview. */
  summary: string;
  /** What the group does, above its subcommands. */
  description: string;
  subcommands: Readonly<Record<string, SubcommandSpec>>;
  options: Readonly<Record<string, OptionSpec>>;
  examples: readonly string[];
  /** Paragraphs after the options: where credentials come from, and so on. */
  notes?: readonly string[];
  /** What exit statuses 0, 1 and 2 mean here. */
  exitStatus: readonly [string, string, string];
  /** The group's code, loaded only when one of its subcommands runs. */
  load: () => Promise<RunGroup>;
}

/** The options every subcommand takes, in every help. */
export const OUTPUT_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  json: { type: 'boolean', description: 'print one JSON document on stdout (no colour, no progress on stderr)' },
  verbose: { type: 'boolean', description: 'with an error, print the chain of errors that caused it' },
};

/** Spellings of the store flag that are gone: each is a usage error naming `--store`. */
export const RENAMED_OPTIONS: Readonly<Record<string, string>> = {
  root: 'store',
  'cache-root': 'store',
  cache: 'store',
};

const STORE: OptionSpec = {
  type: 'string',
  placeholder: 'DIR',
  description: 'the store (default: {defaultStore})',
  path: 'store',
};

const REMOTE_TIER: Readonly<Record<string, OptionSpec>> = {
  remote: {
    type: 'string',
    placeholder: 'URL',
    description:
      'share the store through an OCI registry, https://host[:port]: a miss asks it before the origin, what is fetched is pushed; its failures are warnings on stderr',
  },
  repository: {
    type: 'string',
    placeholder: 'NAME',
    description: 'with --remote: the repository in it (e.g. team/cache)',
  },
  'insecure-http': { type: 'boolean', description: 'with --remote: allow a plain http registry' },
};

const REGISTRY_CREDENTIALS =
  'Registry credentials come from the environment only, never from an option: AGENTPROTO_REGISTRY_USERNAME and AGENTPROTO_REGISTRY_PASSWORD (HTTP Basic, or the token service of a bearer registry), or AGENTPROTO_REGISTRY_TOKEN (a bearer token).';

const STORE_DIR: PositionalSpec = { name: 'dir', what: 'a folder', path: 'folder' };
const PLUGIN_DIR: PositionalSpec = { name: 'dir', what: 'a plugin folder', path: 'folder' };
const CONFIG: PositionalSpec = { name: 'config', what: 'a configuration file', path: 'file' };
const MANIFEST: PositionalSpec = { name: 'manifest', what: 'a manifest', path: 'file' };
// Files, inline entries or `-` (stdin), one or more: the skills command tells them apart and checks each path itself.
const DECLARATION: PositionalSpec = {
  name: 'declaration',
  what: 'one or more declarations: a file, an inline entry (https://host/org/skills.git@v1#skills/review) or - for stdin',
  variadic: true,
  completes: 'file',
};

/** Stdin holds one document: `-` may stand once among the declarations. */
function stdinOnce(invocation: Invocation): void {
  if (invocation.positionals.filter((arg) => arg === '-').length > 1)
    throw new UsageError(`skills ${invocation.sub}: - (a declaration on stdin) may be given once`);
}

export const GROUPS: Readonly<Record<string, GroupSpec>> = {
  cache: {
    summary: 'the content cache: put, ls, verify, gc, push, pull',
    description:
      'Store folders in the content cache, keyed by their tree digest, and share them through an OCI registry.',
    subcommands: {
      put: {
        summary: 'store a local folder, keyed by its tree digest',
        positionals: [STORE_DIR],
        options: ['store', 'provider', 'name'],
        examples: ['agentproto cache put ./my-skill --name my-skill'],
      },
      ls: {
        summary: 'list stored objects and the keys that reach them',
        positionals: [],
        options: ['store'],
        examples: ['agentproto cache ls --store /tmp/agentproto-store'],
      },
      verify: {
        summary: 're-hash every object against its marker; exit 1 if one is corrupt',
        positionals: [],
        options: ['store', 'quarantine'],
        examples: ['agentproto cache verify --quarantine'],
      },
      gc: {
        summary: 'remove objects, keys and links that nothing reaches',
        positionals: [],
        options: ['store'],
        examples: ['agentproto cache gc --store /tmp/agentproto-store'],
      },
      push: {
        summary: 'push every key of the store to an OCI registry (--remote, --repository)',
        positionals: [],
        options: ['store', 'remote', 'repository', 'insecure-http'],
        examples: ['agentproto cache push --remote https://oci.example.com --repository team/cache'],
      },
      pull: {
        summary: 'acquire every key the registry lists into the store, from the registry only',
        positionals: [],
        options: ['store', 'remote', 'repository', 'insecure-http'],
        examples: ['agentproto cache pull --remote https://oci.example.com --repository team/cache'],
      },
    },
    options: {
      store: STORE,
      provider: {
        type: 'string',
        placeholder: 'ID',
        description: 'the provider recorded in the key (default: local)',
      },
      name: {
        type: 'string',
        placeholder: 'NAME',
        description: 'declare the folder as {"name": NAME} instead of its path',
      },
      quarantine: { type: 'boolean', description: 'move corrupt objects to quarantine/ and drop their keys' },
      remote: { type: 'string', placeholder: 'URL', description: 'the OCI registry, https://host[:port]' },
      repository: { type: 'string', placeholder: 'NAME', description: 'the repository in it (e.g. team/cache)' },
      'insecure-http': { type: 'boolean', description: 'allow a plain http registry' },
    },
    examples: [
      'agentproto cache put ./my-skill --name my-skill',
      'agentproto cache ls --store /tmp/agentproto-store',
      'agentproto cache verify --quarantine',
      'agentproto cache push --remote https://oci.example.com --repository team/cache',
    ],
    notes: [REGISTRY_CREDENTIALS],
    exitStatus: [
      'done; verify: every object is intact',
      'problems found: a corrupt object (verify), a key that failed (push, pull), or an error',
      'wrong command line',
    ],
    load: async () => (await import('./commands/cache.js')).runCache,
  },

  code: {
    summary: 'AIP-26 code bundles: check, bundle, run',
    description:
      'Check, bundle and run the code of an AIP-26 manifest (JSON or YAML), or of a lean CODE.md (schema: code/v2; its paths are relative to its folder).',
    subcommands: {
      check: {
        summary: 'check its code and run blocks; resolve every source; the run file must be in the bundle',
        positionals: [MANIFEST],
        options: ['workspace', 'github-url', 'store', 'remote', 'repository', 'insecure-http'],
        examples: ['agentproto code check tool.yaml'],
      },
      bundle: {
        summary: 'build its deterministic tar.gz (--out FILE); refused when the run file is not in it',
        positionals: [MANIFEST],
        options: ['workspace', 'out', 'github-url', 'store', 'remote', 'repository', 'insecure-http'],
        required: ['out'],
        examples: ['agentproto code bundle tool.yaml --out tool.tar.gz'],
      },
      run: {
        summary:
          'build it and run it isolated in bubblewrap by its runner block (limits, engine), with only PATH and --env KEY=VALUE, and no network but --egress hosts',
        positionals: [MANIFEST],
        options: [
          'workspace',
          'env',
          'egress',
          'no-isolation',
          'github-url',
          'store',
          'remote',
          'repository',
          'insecure-http',
        ],
        check: (invocation) => {
          if (invocation.values['no-isolation'] === true && invocation.values.egress !== undefined)
            throw new UsageError(
              'code run: --egress grants hosts to an isolated run; with --no-isolation the program reaches any network',
            );
        },
        examples: [
          'agentproto code run tool.yaml --env GREETING=hello',
          'agentproto code run .code/notion-search/CODE.md --egress api.notion.com',
          'agentproto code run tool.yaml --no-isolation',
        ],
      },
    },
    options: {
      workspace: {
        type: 'string',
        placeholder: 'DIR',
        description: "the workspace (default: the manifest's folder)",
        path: 'folder',
      },
      out: { type: 'string', placeholder: 'FILE', description: 'where the tar.gz goes', path: 'new-file' },
      env: {
        type: 'string',
        multiple: true,
        placeholder: 'KEY=VALUE',
        description: 'a variable for the program (repeatable)',
      },
      egress: {
        type: 'string',
        multiple: true,
        placeholder: 'HOST[:PORT]',
        description:
          'let the isolated program reach this host, through a proxy that allows nothing else (repeatable; a bare host means ports 22, 80 and 443); without it the program has no network, whatever the manifest asks',
      },
      'no-isolation': {
        type: 'boolean',
        description:
          'run as a bare subprocess, without bubblewrap: the program then reads and writes whatever your user can (home folder, keys), reaches any network, and has no memory or CPU cap; only the timeout still holds',
      },
      'github-url': {
        type: 'string',
        placeholder: 'URL',
        description: 'the git host of github sources (default https://github.com); a token is read from GITHUB_TOKEN',
      },
      store: { ...STORE, description: 'where fetched github sources are cached (default: {defaultStore})' },
      ...REMOTE_TIER,
    },
    examples: [
      'agentproto code check tool.yaml',
      'agentproto code bundle tool.yaml --out tool.tar.gz',
      'agentproto code run tool.yaml --env GREETING=hello',
      'agentproto code run .code/notion-search/CODE.md',
    ],
    notes: [
      "code run runs the bundle through the AIP-17 runner as a workspace manifest: isolated in bubblewrap, it sees the bundle read-only at /bundle, a scratch /tmp and the system folders, never your home folder; it has no network unless --egress grants hosts, and runner.limits (timeout_ms, memory_mb, cpu_ms) hold. engine: in-process is run as a subprocess (with a warning), engine: sandbox on this machine's bubblewrap driver. Where bubblewrap cannot isolate, it fails with SANDBOX_UNAVAILABLE and runs nothing; --no-isolation is the explicit way to run without it.",
    ],
    exitStatus: [
      'done; run: the program exited 0',
      'problems found: an invalid manifest or runner block, a source that does not resolve, a program that exited non-zero, was killed, timed out or ran past its memory or CPU cap (run), or a machine where bubblewrap cannot isolate (run, SANDBOX_UNAVAILABLE)',
      'wrong command line',
    ],
    load: async () => (await import('./commands/code.js')).runCode,
  },

  skills: {
    summary: 'skill declarations: resolve, prepare, lock',
    description:
      'Resolve, fetch and lock the skills the declarations list. A declaration is a JSON or YAML file holding the skills array (or an object with a "skills" array), an entry written inline (https://host/org/skills.git@v1#skills/review), or - to read a file\'s content from stdin (once). An existing path is a file; anything else must read as an entry. Several declarations are one list of their entries, in the order given.',
    subcommands: {
      resolve: {
        summary: 'resolve every skill to a commit and content id, authorizing each; say which are cached',
        positionals: [DECLARATION],
        options: [
          'store',
          'vault',
          'local-root',
          'provider-package',
          'locked',
          'remote',
          'repository',
          'insecure-http',
        ],
        check: stdinOnce,
        examples: [
          'agentproto skills resolve skills.yaml',
          "agentproto skills resolve 'https://example.com/skills.git@main#skills/review'",
        ],
      },
      prepare: {
        summary: "resolve, fetch what is missing, and print each skill's directory",
        positionals: [DECLARATION],
        options: [
          'store',
          'vault',
          'local-root',
          'provider-package',
          'locked',
          'link-into',
          'copy',
          'remote',
          'repository',
          'insecure-http',
        ],
        check: (invocation) => {
          stdinOnce(invocation);
          if (invocation.values.copy && invocation.values['link-into'] === undefined)
            throw new UsageError('skills prepare: --copy goes with --link-into DIR');
        },
        examples: [
          "agentproto skills prepare 'https://example.com/skills.git@v1#skills/review'",
          "agentproto skills prepare a.yaml 'https://example.com/b.git@v2#skills/lint'",
          'agentproto skills prepare skills.yaml --link-into .claude/skills',
          'agentproto skills prepare skills.yaml --locked skills.lock.json',
          'agentproto skills prepare - --link-into .agents/skills --copy < skills.yaml',
        ],
      },
      lock: {
        summary: "resolve every skill (authorizing each) and write each one's commit and content id: a lock file",
        positionals: [DECLARATION],
        options: ['store', 'vault', 'local-root', 'provider-package', 'out', 'remote', 'repository', 'insecure-http'],
        check: stdinOnce,
        examples: [
          'agentproto skills lock skills.yaml --out skills.lock.json',
          "agentproto skills lock 'https://example.com/skills.git@main#skills/review'",
        ],
      },
    },
    options: {
      store: STORE,
      vault: {
        type: 'string',
        placeholder: 'FILE',
        description:
          'HTTP Basic credentials, {"<url prefix>": {"username": …, "passwordEnv": "<variable holding the password>"}}',
        path: 'file',
      },
      'local-root': {
        type: 'string',
        multiple: true,
        placeholder: 'DIR',
        description: 'allow the local provider for folders under DIR (repeatable)',
        path: 'folder',
      },
      'provider-package': {
        type: 'string',
        multiple: true,
        placeholder: 'SPEC',
        description: 'load skill providers from an installed package (repeatable)',
      },
      locked: {
        type: 'string',
        placeholder: 'FILE',
        description:
          'prepare or resolve exactly the versions of this lock file (from skills lock), still authorizing every entry; a declaration or origin that differs fails with SKILL_LOCK_DRIFT',
        path: 'file',
      },
      'link-into': {
        type: 'string',
        placeholder: 'DIR',
        description:
          'make each prepared skill DIR/<name>, a link into the store (e.g. .claude/skills); never replaces what it did not make',
        path: 'new-folder',
      },
      copy: { type: 'boolean', description: 'with --link-into: copy the files instead of linking' },
      out: {
        type: 'string',
        placeholder: 'FILE',
        description: 'write the lock file here (replaced whole) instead of printing it',
        path: 'new-file',
      },
      ...REMOTE_TIER,
    },
    examples: [
      'agentproto skills resolve skills.yaml',
      'agentproto skills prepare skills.yaml --link-into .claude/skills',
      'agentproto skills prepare skills.yaml --locked skills.lock.json --json',
    ],
    notes: [
      'Deploy keys: named in AGENTPROTO_DEPLOY_KEY_SECRET_NAMES, read from the environment variable of that name.',
    ],
    exitStatus: [
      'done',
      'problems found: an entry that does not resolve, authorize or fetch, an unreadable declaration, drift from the lock, or something in the way of --link-into',
      'wrong command line',
    ],
    load: async () => (await import('./commands/skills.js')).runSkills,
  },

  plugin: {
    summary: 'Agent Plugins packages: init, build, validate, verify, import, emit, explain, push, pull',
    description: 'Build, check and share Agent Plugins packages (plugin.json, skills/, mcp.json).',
    subcommands: {
      init: {
        summary:
          'write a new plugin project into a new or empty folder (default: the working one): a commented plugin.toml and one example skill, which build and validate clean',
        positionals: [{ name: 'dir', what: 'a folder to write the project into', path: 'new-folder', optional: true }],
        options: [],
        examples: ['agentproto plugin init acme.tools'],
      },
      build: {
        summary:
          'build the package a configuration (TOML/YAML/JSON) describes and write it to --out DIR; findings on stderr; exit 1 when anything configured was left out (the package records it for verify)',
        positionals: [CONFIG],
        options: ['out', 'spec', 'replace', 'strict'],
        required: ['out'],
        examples: ['agentproto plugin build plugin.toml --out dist/acme.tools'],
      },
      validate: {
        summary: 'load a package as a conformant client does; exit 1 if rejected',
        positionals: [{ ...PLUGIN_DIR, optional: true, shown: '<dir>' }],
        options: ['strict', 'explain'],
        check: (invocation) => {
          if (
            invocation.values.explain !== undefined &&
            (invocation.positionals.length > 0 || invocation.values.strict)
          )
            throw new UsageError('plugin validate --explain CODE takes no folder and no --strict');
          if (invocation.values.explain === undefined && invocation.positionals.length === 0)
            throw new UsageError('plugin validate takes a plugin folder');
        },
        examples: ['agentproto plugin validate dist/acme.tools --strict'],
      },
      verify: {
        summary: 'exit 1 when the folder is not what the configuration builds, or its build left something out',
        positionals: [CONFIG, PLUGIN_DIR],
        options: ['spec'],
        examples: ['agentproto plugin verify plugin.toml dist/acme.tools'],
      },
      import: {
        summary:
          'write its content root and plugin.config.json to --out DIR; exit 1 when a part a client skips was left out',
        positionals: [PLUGIN_DIR],
        options: ['out', 'replace', 'strict'],
        required: ['out'],
        examples: ['agentproto plugin import ./acme.tools --out acme-source'],
      },
      emit: {
        summary: 'write a clean package to --out DIR, read back and built again',
        positionals: [CONFIG],
        options: ['out', 'spec', 'replace', 'strict'],
        required: ['out'],
        examples: ['agentproto plugin emit plugin.toml --out dist/acme.tools --spec 1.1.0'],
      },
      explain: {
        summary: 'print an AR9O rule or what a finding code means',
        positionals: [{ name: 'code', what: 'one code (AR9O0–AR9O5 or a finding code)' }],
        options: [],
        examples: ['agentproto plugin explain AR9O3'],
      },
      push: {
        summary:
          "push the folder's clean package as an OCI artifact to host[:port]/repository:tag; refused before upload on an error finding",
        positionals: [PLUGIN_DIR, { name: 'ref', what: 'a reference (host[:port]/repository:tag)' }],
        options: ['insecure-http'],
        examples: ['agentproto plugin push dist/acme.tools oci.example.com/team/acme:1.2.0'],
      },
      pull: {
        summary:
          'pull an artifact (…:tag or …@sha256:…), verify its digests, extract it safely and validate it; <dir> must be absent or empty',
        positionals: [
          { name: 'ref', what: 'a reference (host[:port]/repository:tag or …@sha256:…)' },
          { name: 'dir', what: 'a destination folder', path: 'new-folder' },
        ],
        options: ['insecure-http'],
        examples: ['agentproto plugin pull oci.example.com/team/acme:1.2.0 acme.tools'],
      },
    },
    options: {
      out: { type: 'string', placeholder: 'DIR', description: 'the folder to write', path: 'new-folder' },
      spec: {
        type: 'string',
        placeholder: 'VERSION',
        description: "the Agent Plugins version, 1.0.0 or 1.1.0 (default: the configuration's spec, else 1.0.0)",
        choices: ['1.0.0', '1.1.0'],
      },
      replace: { type: 'boolean', description: 'replace a non-empty --out folder' },
      strict: {
        type: 'boolean',
        description: {
          validate: 'exit 2 on the first error finding, naming its code',
          build: 'exit 2 on the first error or warning finding',
          import: 'exit 2 on the first error or warning finding',
          emit: 'exit 2 on the first error or warning finding',
        },
      },
      explain: {
        type: 'string',
        placeholder: 'CODE',
        description: 'print the rule of CODE instead of validating',
      },
      'insecure-http': { type: 'boolean', description: 'allow a plain http registry' },
    },
    examples: [
      'agentproto plugin build plugin.toml --out dist/acme.tools',
      'agentproto plugin validate dist/acme.tools --strict',
      'agentproto plugin explain AR9O3',
      'agentproto plugin push dist/acme.tools oci.example.com/team/acme:1.2.0',
    ],
    notes: [REGISTRY_CREDENTIALS],
    exitStatus: [
      'done',
      'problems found: a plugin rejected, a build or emit that left something configured out, a folder that drifted or lacks a component (verify), a push or pull refused, or an error',
      'wrong command line, validate --strict found an error finding, or build/emit --strict found an error or warning finding',
    ],
    load: async () => (await import('./commands/plugin.js')).runPlugin,
  },

  completion: {
    summary: 'a shell completion script: bash, zsh, fish',
    description:
      "Print a completion script for a shell, made from the same table the parser reads. Load it from the shell's startup file, e.g. `source <(agentproto completion bash)` in ~/.bashrc, `agentproto completion fish | source` in config.fish.",
    subcommands: {
      bash: { summary: 'the script for bash', positionals: [], options: [], examples: ['agentproto completion bash'] },
      zsh: { summary: 'the script for zsh', positionals: [], options: [], examples: ['agentproto completion zsh'] },
      fish: { summary: 'the script for fish', positionals: [], options: [], examples: ['agentproto completion fish'] },
    },
    options: {},
    examples: ['agentproto completion bash', 'agentproto completion zsh', 'agentproto completion fish'],
    exitStatus: ['done', 'an error', 'wrong command line'],
    load: async () => (await import('./completion.js')).runCompletion,
  },
};

export function isGroup(value: string | undefined): value is string {
  return value !== undefined && Object.hasOwn(GROUPS, value);
}

/** The options `group sub` takes, by name, its own and the output options. */
export function optionsOf(group: string, sub: string): Readonly<Record<string, OptionSpec>> {
  const spec = GROUPS[group]!;
  const own = Object.fromEntries(spec.subcommands[sub]!.options.map((name) => [name, spec.options[name]!]));
  return { ...own, ...OUTPUT_OPTIONS };
}

/** An option's description for one subcommand, or for the group (each subcommand prefixed). */
export function describeOption(option: OptionSpec, sub?: string): string {
  if (typeof option.description === 'string') return option.description;
  if (sub !== undefined) return option.description[sub] ?? '';
  // Subcommands that mean the same by it share one clause: `build, import, emit: …`.
  const bySense = new Map<string, string[]>();
  for (const [name, text] of Object.entries(option.description))
    bySense.set(text, [...(bySense.get(text) ?? []), name]);
  return [...bySense].map(([text, names]) => `${names.join(', ')}: ${text}`).join('; ');
}

/** A string option's value, or undefined when it was not given. */
export function textOption(invocation: Invocation, name: string): string | undefined {
  const value = invocation.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** Whether a flag was given. */
export function flagOption(invocation: Invocation, name: string): boolean {
  return invocation.values[name] === true;
}

/** A repeatable option's values, in order; none when it was not given. */
export function listOption(invocation: Invocation, name: string): string[] {
  const value = invocation.values[name];
  return Array.isArray(value) ? value : [];
}
