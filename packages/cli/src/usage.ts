import { defaultCacheRoot } from '@agentproto/content-cache';

/** The command line was wrong: exit 2 with the message and the usage, nothing attempted. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function usage(): string {
  return `Usage: agentproto <command> [options]

Commands:
  cache put <dir>   store a local folder in the content cache, keyed by its tree digest
  cache ls          list stored objects and the keys that reach them
  cache verify      re-hash every object against its marker; exit 1 if one is corrupt
  cache gc          remove objects, keys and links that nothing reaches
  cache push        push every key of the store to an OCI registry (--remote, --repository)
  cache pull        acquire every key the registry lists into the store, from the registry only
  code check <m>    check an AIP-26 manifest's code and run blocks; resolve every source
  code bundle <m>   build its deterministic tar.gz (--out FILE)
  code run <m>      build it and run it locally, with only PATH and --env KEY=VALUE
  skills resolve <d>  resolve every skill of a declaration (JSON/YAML) to a commit and
                    content id, authorizing each; say which are cached
  skills prepare <d>  resolve, fetch what is missing, and print each skill's directory
  plugin build <c>  build the Agent Plugins package a configuration (TOML/YAML/JSON)
                    describes and write it to --out DIR; findings on stderr
  plugin validate <dir>  load a package as a conformant client does; exit 1 if rejected
  plugin verify <c> <dir>  exit 1 when the folder is not what the configuration builds
  plugin import <dir>  write its content root and plugin.config.json to --out DIR
  plugin emit <c>   write a clean package to --out DIR, read back and built again
  plugin explain <code>  print an AR9O rule or what a finding code means
  plugin push <dir> <ref>  push the folder's clean package as an OCI artifact to
                    host[:port]/repository:tag; refused before upload on an error finding
  plugin pull <ref> <dir>  pull an artifact (…:tag or …@sha256:…), verify its digests,
                    extract it safely and validate it; <dir> must be absent or empty

Options:
  --root DIR        the store (default: ${defaultCacheRoot()})
  --json            print one JSON document on stdout
  --provider ID     cache put: the provider recorded in the key (default: local)
  --name NAME       cache put: declare the folder as {"name": NAME} instead of its path
  --quarantine      cache verify: move corrupt objects to quarantine/ and drop their keys
  --workspace DIR   code: the workspace (default: the manifest's folder)
  --out FILE        code bundle: where the tar.gz goes;
                    plugin build, import, emit: the folder to write (DIR)
  --github-url URL  code: the git host of github sources (default https://github.com);
                    a token is read from GITHUB_TOKEN
  --cache-root DIR  code: where fetched github sources are cached (default: --root's default)
  --cache DIR       skills: the store (default: --root's default)
  --vault FILE      skills: HTTP Basic credentials, {"<url prefix>": {"username": …,
                    "passwordEnv": "<variable holding the password>"}}
  --local-root DIR  skills: allow the local provider for folders under DIR
  --provider-package SPEC  skills: load skill providers from an installed package
                    Deploy keys: named in AGENTPROTO_DEPLOY_KEY_SECRET_NAMES, read from
                    the environment variable of that name
  --spec VERSION    plugin build, verify, emit: the Agent Plugins version, 1.0.0 or 1.1.0
                    (default: the configuration's spec, else 1.0.0)
  --replace         plugin build, import, emit: replace a non-empty --out folder
  --remote URL      cache push, pull: the OCI registry, https://host[:port]; skills, code:
                    share the store through it (a miss asks it before the origin, what is
                    fetched is pushed; its failures are warnings on stderr)
  --repository NAME  with --remote: the repository in it (e.g. team/cache)
  --insecure-http   plugin push, pull; --remote: allow a plain http registry
                    Registry credentials come from the environment only:
                    AGENTPROTO_REGISTRY_USERNAME and AGENTPROTO_REGISTRY_PASSWORD (HTTP
                    Basic, or the token service of a bearer registry), or
                    AGENTPROTO_REGISTRY_TOKEN (a bearer token)
  --strict          plugin validate: exit 2 on the first error finding, naming its code
  --explain CODE    plugin validate: print the rule of CODE instead of validating
  -h, --help        show this help
  --version         print the version

Exit codes: 0 done, 1 failed, corrupt objects found, a plugin rejected or drifted,
a push or pull refused or a key of cache push|pull failed, 2 wrong command line or plugin validate --strict found an error.
`;
}
