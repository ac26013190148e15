import { SECRET_RULES } from './rules.js';

/**
 * Likely secrets in values a plugin packages as plain data: stdio `env` values and `args`,
 * remote `url` and `headers` (§7.2.1: "Plugins MUST NOT embed credentials or other secrets in
 * `headers`"; §9.2: "… in `env`"). A package is public data, so whatever is found has leaked.
 *
 * The invariant that protects the secret itself: a SecretMatch carries the rule and at most
 * the vendor's public marker (`ghp_…`), never a character of the value past it, so no
 * finding, message, log line or JSON report built from it can hold the secret.
 *
 * What counts, in this order (the first that applies names the finding):
 *
 * | Kind        | Applies when                                                                 |
 * | ----------- | ---------------------------------------------------------------------------- |
 * | a format    | a row of SECRET_RULES matches anywhere in the value                          |
 * | url-password| a `scheme://user:password@` with a literal, non-placeholder password         |
 * | credential-name | the value sits under a credential-like name (env name, header name, `--token` flag, URL query key) and is a literal that is not a placeholder |
 * | high-entropy| a run of 24+ characters mixing upper case, lower case and digits, random enough (Shannon entropy), that is not hex, not a UUID, and not base64 of text |
 *
 * Not secrets: `${…}` placeholders (only `${PLUGIN_ROOT}`/`${PLUGIN_DATA}` are expanded, §9.2,
 * but any `${NAME}` is text that names a variable, not a credential, so it is removed before
 * looking); the word "sk-" in prose; UUIDs; git SHAs and other hex digests; base64 of
 * ordinary text; and, under a credential name, an obvious placeholder (`changeme`,
 * `<your-key>`, `xxxx`, `your_api_key_here`, `true`, a path).
 */
export interface SecretMatch {
  /** A SECRET_RULES id, or url-password, credential-name, high-entropy. */
  rule: string;
  /** What the value looks like, for a message. */
  title: string;
  /** The vendor's public marker followed by "…", or undefined: never more of the value. */
  masked: string | undefined;
}

export type SecretField = 'env' | 'header' | 'arg' | 'url';

export interface SecretContext {
  field: SecretField;
  /** The env name, the header name, or the flag an argument belongs to. */
  name?: string;
}

const PLACEHOLDER = /\$\{[^}]*\}/g;

/** The likely secret in `value`, or undefined. Pure and total: any string is fine. */
export function detectSecret(value: string, context: SecretContext): SecretMatch | undefined {
  // Placeholders are references, not material: `Bearer ${TOKEN}` holds no secret.
  const literal = value.replace(PLACEHOLDER, ' ');
  if (literal.trim() === '') return undefined;
  for (const rule of SECRET_RULES) {
    rule.pattern.lastIndex = 0;
    const match = rule.pattern.exec(literal);
    if (match !== null)
      return {
        rule: rule.id,
        title: rule.title,
        masked: rule.prefix > 0 ? `${match[0].slice(0, rule.prefix)}…` : undefined,
      };
  }
  if (hasUrlPassword(literal))
    return { rule: 'url-password', title: 'a password in a URL (user:password@)', masked: undefined };
  if (hasCredentialQuery(literal))
    return {
      rule: 'credential-name',
      title: 'a literal value under a credential-like URL query key',
      masked: undefined,
    };
  if (hasCredentialAssignment(literal))
    return {
      rule: 'credential-name',
      title: 'a literal value assigned to a credential-like name inside the value',
      masked: undefined,
    };
  if (context.name !== undefined && isCredentialName(context.name) && !isPlaceholderValue(literal)) {
    return {
      rule: 'credential-name',
      title: `a literal value under a credential-like ${FIELD_NOUN[context.field]}`,
      masked: undefined,
    };
  }
  if (hasHighEntropyRun(literal))
    return { rule: 'high-entropy', title: 'a random-looking string (high entropy)', masked: undefined };
  return undefined;
}

const FIELD_NOUN: Readonly<Record<SecretField, string>> = {
  env: 'variable name',
  header: 'header name',
  arg: 'flag',
  url: 'name',
};

// scheme://user:password@ — any scheme (https, postgres, redis, amqp, mongodb+srv, …).
// Every pattern here is linear in the value (values reach 128 KiB): a scheme starts only where
// a run of scheme characters starts (the lookbehind), so no position is scanned twice.
const URL_USERINFO = /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*:\/\/([^\s/?#@:]*):([^\s/?#@]*)@/g;

function hasUrlPassword(text: string): boolean {
  for (const match of text.matchAll(URL_USERINFO)) {
    const password = match[2] ?? '';
    if (password.trim() !== '' && !isPlaceholderValue(decodeSafely(password))) return true;
  }
  return false;
}

// ?token=…&api_key=… in any URL of the value.
const QUERY_PAIR = /[?&]([^=&#?\s]+)=([^&#?\s]*)/g;

function hasCredentialQuery(text: string): boolean {
  if (!text.includes('://') || !text.includes('?')) return false;
  for (const match of text.matchAll(QUERY_PAIR)) {
    const name = decodeSafely(match[1] ?? '');
    const value = decodeSafely(match[2] ?? '');
    // A bare `key` is Google's API key parameter, and nothing else uses it for public data.
    if ((name.toLowerCase() === 'key' || isCredentialName(name)) && !isPlaceholderValue(value)) return true;
  }
  return false;
}

// NAME=value or Name: value inside a value: `-e OPENAI_API_KEY=…` (docker), `--header
// "Authorization: Bearer …"`, `user=app password=…`. An auth scheme word before the value is skipped.
const ASSIGNMENT =
  /(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9_.-]*)\s*[:=]\s*(?:(?:bearer|basic|token|digest)\s+)?([^\s"',;&]+)/gi;

function hasCredentialAssignment(text: string): boolean {
  for (const match of text.matchAll(ASSIGNMENT)) {
    const name = match[1] ?? '';
    // A URL's scheme (https://…) is no assignment, and a bare `key:` is any key of any map.
    if ((match[2] ?? '').startsWith('//') || name.toLowerCase() === 'key') continue;
    if (
      (isCredentialName(name) || CREDENTIAL_HEADER_NAMES.has(name.toLowerCase())) &&
      !isPlaceholderValue(match[2] ?? '')
    )
      return true;
  }
  return false;
}

const CREDENTIAL_HEADER_NAMES: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie']);

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Words that make a name a credential's wherever they stand (`GITHUB_TOKEN`, `DB_PASSWORD`). */
const CREDENTIAL_WORDS: ReadonlySet<string> = new Set([
  'token',
  'secret',
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'credential',
  'credentials',
  'apikey',
  'auth',
  'authorization',
  'bearer',
  'pat',
  'cookie',
  'privatekey',
  'accesskey',
  'secretkey',
  'clientsecret',
  'accesstoken',
  'authtoken',
  'refreshtoken',
]);
/** Words that end such joined words: `ACCESSTOKEN`, `CLIENTSECRET`, `DBPASSWORD`. */
const CREDENTIAL_ENDINGS = ['token', 'secret', 'password', 'passwd', 'apikey'];
/** A trailing `key` is a credential's unless the word before it says otherwise (`SORT_KEY`, `PUBLIC_KEY`). */
const NOT_SECRET_KEYS: ReadonlySet<string> = new Set([
  'sort',
  'primary',
  'partition',
  'cache',
  'foreign',
  'hash',
  'group',
  'lookup',
  'public',
  'pub',
  'map',
  'idempotency',
  'dedup',
  'routing',
  'row',
  'shard',
  'object',
  'bucket',
  'index',
  'hot',
  'short',
  'storage',
  'config',
  'settings',
  'translation',
  'i18n',
]);
/** A name whose last word is one of these names a setting about a credential, not the credential. */
const NOT_SECRET_TAILS: ReadonlySet<string> = new Set([
  'url',
  'uri',
  'endpoint',
  'host',
  'hostname',
  'port',
  'file',
  'path',
  'dir',
  'directory',
  'type',
  'mode',
  'method',
  'header',
  'name',
  'id',
  'enabled',
  'disabled',
  'ttl',
  'timeout',
  'expiry',
  'expires',
  'scope',
  'scopes',
  'provider',
  'region',
  'version',
  'format',
  'length',
  'size',
  'max',
  'min',
  'limit',
  'count',
  'env',
  'var',
  'user',
  'username',
  'email',
  'issuer',
  'audience',
  'algorithm',
  'alg',
  'prefix',
  'kind',
  'location',
  'domain',
  'realm',
  'tokens',
  'server',
  'strategy',
  'required',
  'store',
]);

/** The words of a name: split at `_`, `-`, `.`, spaces and lower-to-upper case changes, lower-cased. */
function wordsOf(name: string): string[] {
  return name
    .replace(/^-+/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase());
}

/** Whether a name (env variable, header, flag, query key) names a credential. */
function isCredentialName(name: string): boolean {
  const words = wordsOf(name);
  const last = words.at(-1);
  if (last === undefined || NOT_SECRET_TAILS.has(last)) return false;
  if (last === 'key') return words.length === 1 || !NOT_SECRET_KEYS.has(words.at(-2) ?? '');
  return words.some(
    (w) => CREDENTIAL_WORDS.has(w) || CREDENTIAL_ENDINGS.some((end) => w.length > end.length && w.endsWith(end)),
  );
}

/**
 * A literal under a credential name that is no credential. `API_KEY = "changeme"` is
 * decided here as not a secret: the words below are the usual stand-ins of templates and
 * examples, and a plugin that ships one leaks nothing. Anything else under the name is.
 */
const PLACEHOLDER_WORDS =
  /^(?:change[-_ ]?me|changeit|placeholder|example|sample|dummy|fake|test|testing|todo|tbd|fixme|replace[-_ ]?me|redacted|hidden|secret|password|passwd|token|api[-_ ]?key|key|none|null|nil|undefined|empty|true|false|yes|no|on|off|enabled|disabled|[01]|bearer|basic|digest|your[-_ ].*|my[-_ ].*|insert[-_ ].*|put[-_ ].*|enter[-_ ].*)$/i;

function isPlaceholderValue(value: string): boolean {
  const text = value.trim();
  if (text === '') return true;
  if (PLACEHOLDER_WORDS.test(text)) return true;
  // <your-key>, [token], {secret}, and xxxx, ****, ...., ___ (one character repeated).
  if (/^<[^<>]*>$|^\[[^[\]]*\]$|^\{[^{}]*\}$/.test(text)) return true;
  if (/^(.)\1*$/u.test(text) || text === '…') return true;
  // A path (./x, ../x, /x, ~/x, or the rest of ${PLUGIN_DATA}/x once the placeholder is gone).
  if (/^(?:\.{0,2}\/|~\/)[^\s]*$/.test(text)) return true;
  // An http(s) URL with nothing secret in it was already looked at as a URL.
  if (/^https?:\/\/[^\s@]+$/i.test(text)) return true;
  return false;
}

/** Runs of characters that base64, base64url and most token alphabets use. */
const RUN = /[A-Za-z0-9+/_=-]{24,}/g;
const HEX_OR_UUID = /^[0-9a-fA-F-]+$/;

/**
 * A random-looking run: 24+ characters with upper case, lower case and digits, whose Shannon
 * entropy is at least 4.2 bits a character (random base62 of that length gives about 4.4;
 * identifiers and words stay well below), and that is not base64 of text.
 */
function hasHighEntropyRun(text: string): boolean {
  for (const [run] of text.matchAll(RUN)) {
    const body = run.replace(/=+$/, '');
    // Hex (git SHAs, digests, UUIDs) and Subresource Integrity digests (sha512-…) are hashes of public data.
    if (body.length < 24 || HEX_OR_UUID.test(body) || /^sha(?:1|256|384|512)-/i.test(body)) continue;
    if (!/[a-z]/.test(body) || !/[A-Z]/.test(body) || !/[0-9]/.test(body)) continue;
    if (entropy(body) < 4.2) continue;
    if (isBase64OfText(body)) continue;
    return true;
  }
  return false;
}

function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** Whether `run` is base64 (or base64url) of UTF-8 text: every byte printable or whitespace. */
function isBase64OfText(run: string): boolean {
  if (!/^[A-Za-z0-9+/_-]+$/.test(run)) return false;
  // Whole groups only: a cut last group would decode to a stray byte.
  const whole = run.slice(0, run.length - (run.length % 4));
  const bytes = base64Bytes(whole.replace(/-/g, '+').replace(/_/g, '/'));
  if (bytes.length < 12) return false;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return false;
  }
  return /^[\p{L}\p{N}\p{P}\p{S}\p{Zs}\t\r\n]+$/u.test(text);
}

/** The bytes of standard base64 (whole groups, no padding needed), with web-standard atob only. */
function base64Bytes(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let at = 0; at < binary.length; at += 1) bytes[at] = binary.charCodeAt(at);
  return bytes;
}
