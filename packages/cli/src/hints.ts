import { shellQuote } from './format.js';
import { REGISTRY_ENV } from './registry-env.js';

/** An error with a stable code; the facts a hint reads are its other fields. */
export type CodedError = Error & { readonly code: string };
type Facts = CodedError & Readonly<Record<string, unknown>>;

/** What a hint may depend on besides the error: the command group that ran. */
export interface HintContext {
  group: string | undefined;
}

type Hint = string | ((error: Facts, context: HintContext) => string | undefined);

/** The option that names the store: one spelling for every command that opens one. */
const STORE_FLAG = '--store';

const CREDENTIALS_IN_URL =
  'remove the user and password from the URL; give HTTPS credentials through --vault FILE, SSH keys through AGENTPROTO_DEPLOY_KEY_SECRET_NAMES';
const KNOWN_HOSTS =
  "the source's config.known_hosts must hold the server's verified host key, as a known_hosts line for this host ([host]:port for a nonstandard port)";
const UNTRUSTED_ARCHIVE =
  'nothing was extracted: the archive breaks a rule of the safe reader (the reason in parentheses), so it cannot be used as it is; tell whoever publishes it';

function gitCredentials(group: string | undefined): string {
  return group === 'code'
    ? 'set GITHUB_TOKEN to a token that can read the repository'
    : 'check the --vault entry for this URL (its passwordEnv variable must hold the password) or, for SSH, the deploy key named in AGENTPROTO_DEPLOY_KEY_SECRET_NAMES';
}

/**
 * One hint per error code, for the failures a user can do something about; a code without
 * an entry prints no hint. The text says what to do, never what the message already says.
 */
const HINTS: Readonly<Record<string, Hint>> = {
  REGISTRY_AUTH: `set ${REGISTRY_ENV.username} and ${REGISTRY_ENV.password}, or ${REGISTRY_ENV.token}, to credentials the registry accepts for this repository`,
  REGISTRY_UNREACHABLE:
    'is the registry up and reachable from here? A registry on plain http (e.g. on localhost) needs --insecure-http',
  REGISTRY_DIGEST_MISMATCH:
    'the registry sent content that does not match its digest, and nothing of it was kept; push a good copy again',

  CACHE_ROOT_IN_WORKSPACE: `choose a ${STORE_FLAG} outside the folder being stored (the default store is)`,
  CACHE_ROOT_UNUSABLE: `${STORE_FLAG} must name a folder you can write to, or a path where one can be created`,
  CACHE_UNSAFE_TREE:
    'the folder holds a link that is absolute or leaves it, or a special file: make the link relative and inside the folder, or copy the file in',
  CACHE_CORRUPT_OBJECT: `run 'agentproto cache verify --quarantine' (with the same ${STORE_FLAG}) to set corrupt objects aside; the next run fetches them again`,
  CACHE_LOCK_COMPROMISED:
    'another process removed the lock while this one held it; nothing half-written was published, run the command again',
  UNSAFE_ARCHIVE: UNTRUSTED_ARCHIVE,

  GIT_AUTH_FAILED: (_error, { group }) => gitCredentials(group),
  GIT_HOST_KEY: KNOWN_HOSTS,
  GIT_URL_HAS_CREDENTIALS: CREDENTIALS_IN_URL,
  SKILL_URL_HAS_CREDENTIALS: CREDENTIALS_IN_URL,
  // Preparation keeps the git failure's own code in `reason`: a host key is not a password.
  SKILL_AUTH_FAILED: (error, { group }) => (error.reason === 'GIT_HOST_KEY' ? KNOWN_HOSTS : gitCredentials(group)),
  SKILL_SECRET_MISSING: (error) =>
    typeof error.secretName === 'string'
      ? `put the deploy key's private key in the environment variable ${error.secretName}`
      : undefined,
  SKILL_PROVIDER_UNKNOWN:
    '--local-root DIR enables the local provider for folders under DIR; --provider-package SPEC loads providers from an installed package',
  SKILL_NOT_FOUND: 'check the repository URL, the version (branch, tag or commit) and the path of the entry',
  SKILL_UNSAFE_TREE: 'the skill holds a link that leaves its directory; it cannot be used as it is',
  SKILL_LOCK_DRIFT:
    "nothing of that entry was fetched; if the change is intended, write the lock again with 'agentproto skills lock <declaration>... --out <lock file>' and prepare with the new lock",
  SKILL_LOCK_INVALID:
    "--locked takes a lock file as 'agentproto skills lock' writes it; the message names the value at fault: write the lock again rather than editing it",
  SKILL_LINK_CONFLICT: (error) => {
    const what = typeof error.found === 'string' ? error.found : 'something';
    const where = typeof error.path === 'string' ? shellQuote(error.path) : 'the path';
    return `--link-into replaces only the links and copies it made; ${what} is at ${where}: move it elsewhere, or choose another --link-into DIR`;
  },
  SKILL_LINK_NAME_INVALID:
    "each skill becomes --link-into DIR/<name>: give the entry a name that follows the rule (its 'name' field), or prepare without --link-into",

  AIP26_SOURCE_UNRESOLVED: (error) => {
    const which = typeof error.source === 'string' ? error.source : 'the source';
    switch (error.reason) {
      case 'not-found':
      case 'read-failed':
        return `${which} names the entry of code.sources that failed; local paths are taken from --workspace (default: the manifest's folder)`;
      case 'ref-unresolved':
      case 'fetch-failed':
        return `${which} names the entry of code.sources that failed; check the repository and ref, and GITHUB_TOKEN for a private repository (--github-url for another host)`;
      default:
        return `${which} names the entry of code.sources that failed (sources[i], then each ref it followed)`;
    }
  },
  AIP26_PIN_REQUIRED: 'pin the github source to a full 40-character commit id',
  AIP26_RUN_FILE_MISSING: 'the run block names a file the bundle does not hold; check it against code.sources',
  // Nothing ran: never a silent fall back to no isolation, so the two ways on are named.
  SANDBOX_UNAVAILABLE: (error, { group }) => {
    const install =
      error.reason === 'namespaces-refused'
        ? 'allow user namespaces (outside a container, or one that permits them; sysctl kernel.unprivileged_userns_clone=1)'
        : 'install what isolation needs: sudo apt-get install bubblewrap socat';
    return group === 'code'
      ? `${install}; or run without isolation with --no-isolation (the program then sees your files and network)`
      : install;
  },
  // As root the sandbox runs as nobody, and bubblewrap binds the runtime's folder as nobody too.
  SANDBOX_SETUP_FAILED: (error, { group }) =>
    group === 'code' && /source path .*Permission denied/.test(String(error.detail))
      ? 'run as root, the sandbox runs as nobody, who cannot reach that folder (a runtime installed under /root, say): install the runtime where every user can read it (/usr/local, /opt), or run with --no-isolation'
      : undefined,
  AIP17_IMAGE_UNKNOWN: (_error, { group }) =>
    group === 'code'
      ? "code run runs a sandbox runner on this machine's bubblewrap driver, image local-bubblewrap: omit runner.image or name that one"
      : undefined,
  AIP17_NEEDS_UNSUPPORTED: (_error, { group }) =>
    group === 'code'
      ? "this machine's sandbox installs nothing: bundle the packages with the code instead of listing them in runner.needs"
      : undefined,

  CLI_INIT_NOT_EMPTY: 'name a new folder, e.g. agentproto plugin init my-plugin; nothing in this one was changed',
  CLI_INIT_LINK: 'name a real folder; plugin init never writes through a link',
  PLUGIN_OCI_DESTINATION_EXISTS:
    'pull into a folder that does not exist yet or is empty; the existing one was left untouched',
  PLUGIN_OCI_INVALID_PACKAGE:
    "the findings above say what to fix; 'agentproto plugin explain <code>' explains a finding code",
  PLUGIN_OCI_UNSUPPORTED_ENTRY: 'replace links and special files in the package with regular files, then push again',
  PLUGIN_OCI_UNSAFE_LAYER: UNTRUSTED_ARCHIVE,
  PLUGIN_WRITE_FAILED: (error) =>
    /not empty/.test(error.message) ? 'pass --replace to replace the folder, or choose a new --out' : undefined,
};

/** The hint line for an error with a stable code, or undefined when there is none. */
export function hintFor(error: CodedError, context: HintContext): string | undefined {
  const hint = Object.hasOwn(HINTS, error.code) ? HINTS[error.code] : undefined;
  return typeof hint === 'function' ? hint(error as Facts, context) : hint;
}
