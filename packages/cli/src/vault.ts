import { readFile } from 'node:fs/promises';
import type { BasicVault } from '@agentproto/skill-providers';
import { CommandError } from './command-error.js';
import { shellQuote } from './format.js';

/** One vault entry: the user name, and the environment variable that holds the password. */
export interface VaultEntry {
  username: string;
  passwordEnv: string;
}

/** A URL the vault will not match: its path reads differently once a server decodes it. */
class VaultScopeError extends CommandError {
  readonly code = 'VAULT_URL_REFUSED';
  constructor(
    /** The URL asked about (normalized by @agentproto/git: it holds no credentials). */
    readonly url: string,
    readonly reason: string,
  ) {
    super(`--vault: no credential for ${url}: ${reason}`, {
      hint: 'write the repository path without percent-encoded separators or . and .. segments',
    });
  }
}

/** Where a prefix applies: one origin, and the path segments a URL must start with (decoded). */
interface Scope {
  origin: string;
  segments: string[];
  entry: VaultEntry;
}

/**
 * The decoded segments of an http(s) URL's path, or why there are none. A scope is a claim
 * about which repositories a server serves, and servers decode paths: so the match is
 * made on what the server will see, not on the text. An escape that decodes to a
 * separator (`%2f`, `%5c`, also doubly encoded), a control character, a malformed escape,
 * a backslash, and a segment that is or decodes to `.` or `..` are refused: each names a
 * different repository than its text on some server (`/team/..%2fother-org/x` is
 * `/other-org/x` to a server that decodes before resolving). Empty segments are dropped,
 * as servers collapse them.
 */
function pathSegments(url: string): { origin: string; segments: string[] } | { problem: string } {
  const scheme = /^(https?):\/\//i.exec(url);
  if (!scheme) return { problem: 'only https:// and http:// URLs have vault credentials' };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { problem: 'it is not a URL' };
  }
  if (parsed.username !== '' || parsed.password !== '') return { problem: 'it carries credentials' };
  if (/[?#]/.test(url)) return { problem: 'it has a query or fragment' };
  // The path as written: the URL parser would resolve `..` and turn `\` into `/` itself.
  const afterScheme = url.slice(scheme[0].length);
  const slash = afterScheme.indexOf('/');
  const rawPath = slash < 0 ? '' : afterScheme.slice(slash);
  if (rawPath.includes('\\')) return { problem: 'its path has a backslash' };
  const segments: string[] = [];
  for (const raw of rawPath.split('/')) {
    if (raw === '') continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      return { problem: 'its path has a malformed percent escape' };
    }
    if (/[/\\\u0000-\u001f\u007f]|%(?:2f|5c|00)/i.test(decoded))
      return { problem: 'its path has an encoded separator (%2f, %5c) or control character' };
    if (/^(?:\.|%2e){1,2}$/i.test(decoded)) return { problem: 'its path has a . or .. segment' };
    segments.push(decoded);
  }
  return { origin: `${parsed.protocol}//${parsed.host}`, segments };
}

/**
 * The vault for these entries (URL prefix → entry). A prefix covers its own URL and the
 * URLs below it, segment by segment, on the decoded path: `https://host/team` serves
 * `https://host/team/x.git`, never `https://host/teammates/x.git` nor
 * `https://host/team/..%2fother-org/x.git` (refused with VaultScopeError, so a declaration
 * cannot borrow a scope by spelling). The most specific prefix wins. A prefix that is not
 * a plain http(s) URL is refused when the vault is read.
 */
export function basicVault(
  entries: Readonly<Record<string, VaultEntry>>,
  env: NodeJS.ProcessEnv = process.env,
): BasicVault {
  const scopes: Scope[] = [];
  for (const [prefix, entry] of Object.entries(entries)) {
    const parsed = pathSegments(prefix);
    if ('problem' in parsed) throw new Error(`the prefix ${prefix} is refused: ${parsed.problem}`);
    scopes.push({ ...parsed, entry });
  }
  // Longest first: a scope for a team's sub-group outranks the team's.
  scopes.sort((a, b) => b.segments.length - a.segments.length);
  return (url) => {
    const parsed = pathSegments(url);
    if ('problem' in parsed) throw new VaultScopeError(url, parsed.problem);
    const scope = scopes.find(
      (candidate) =>
        candidate.origin === parsed.origin &&
        candidate.segments.every((segment, index) => parsed.segments[index] === segment),
    );
    if (!scope) return undefined;
    const password = env[scope.entry.passwordEnv];
    return password === undefined ? undefined : { username: scope.entry.username, password };
  };
}

/**
 * The HTTP Basic vault of the command line: a JSON file mapping URL prefixes to a username
 * and the name of the environment variable holding the password. The file names secrets;
 * it holds none, and a password never appears on the command line.
 */
export async function vaultFile(path: string): Promise<BasicVault> {
  try {
    const value = JSON.parse(await readFile(path, 'utf8')) as Record<
      string,
      { username?: unknown; passwordEnv?: unknown }
    >;
    const entries: Record<string, VaultEntry> = {};
    for (const [prefix, entry] of Object.entries(value)) {
      if (typeof entry?.username !== 'string' || typeof entry.passwordEnv !== 'string')
        throw new Error(`${prefix}: needs "username" and "passwordEnv"`);
      entries[prefix] = { username: entry.username, passwordEnv: entry.passwordEnv };
    }
    return basicVault(entries);
  } catch (error) {
    throw new CommandError(
      `cannot read vault ${shellQuote(path)}: ${error instanceof Error ? error.message : String(error)}`,
      {
        hint: 'the vault is JSON: {"<url prefix>": {"username": "…", "passwordEnv": "<variable holding the password>"}}',
      },
    );
  }
}
