import type { GitRepositoryAddress } from './source.js';

/** How a git source is reached, read from its URL alone (pure). */
type GitTransport = 'https' | 'ssh';

export interface GitLocation {
  transport: GitTransport;
  /** The host as a known_hosts line names it: `host`, or `[host]:port` for a nonstandard port. */
  knownHostsName: string;
  /** The egress host: `host` or `host:port`. */
  egress: string;
}

/**
 * How a parsed repository is reached: `https://` and `http://` are HTTPS git,
 * `ssh://[user@]host[:port]/path` and scp-like `[user@]host:path` are SSH. The host and
 * port of a URL are the URL parser's (lower-cased, a scheme's default port left out), as
 * the connection uses them; an scp-like address has its host as written and no port.
 */
export function locationOf(
  address: Pick<GitRepositoryAddress, 'form' | 'scheme' | 'host'>,
  repository: string,
): GitLocation {
  if (address.form === 'scp') return { transport: 'ssh', knownHostsName: address.host, egress: address.host };
  // The grammar accepted it, and @agentproto/git's URL rules parsed it with this parser.
  const parsed = new URL(repository);
  const host = parsed.hostname;
  const port = parsed.port;
  if (address.scheme === 'ssh') {
    const knownHostsName = port && port !== '22' ? `[${host}]:${port}` : host;
    return { transport: 'ssh', knownHostsName, egress: port ? `${host}:${port}` : host };
  }
  return { transport: 'https', knownHostsName: host, egress: port ? `${host}:${port}` : host };
}

/**
 * The host names a known_hosts text has lines for, in OpenSSH's plain form: the first field
 * of each line (the second after a `@cert-authority` or `@revoked` marker) is a
 * comma-separated list of names; blank lines and `#` comments are skipped. Hashed `|1|`
 * entries cannot be read here: they are returned as they are, and the caller counts them
 * as a match so OpenSSH decides.
 */
export function knownHostsNames(text: string): string[] {
  const names: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const fields = trimmed.split(/\s+/);
    const first = fields[0]?.startsWith('@') ? fields[1] : fields[0];
    if (first) names.push(...first.split(','));
  }
  return names;
}
