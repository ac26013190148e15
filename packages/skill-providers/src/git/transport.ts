/** How a git source is reached, read from its URL alone (pure). */
export type GitTransport = 'https' | 'ssh';

export interface GitLocation {
  transport: GitTransport;
  /** The host as a known_hosts line names it: `host`, or `[host]:port` for a nonstandard port. */
  knownHostsName: string;
  /** The egress host: `host` or `host:port`. */
  egress: string;
}

/**
 * The transport and host of a repository URL: `https://` and `http://` are HTTPS git,
 * `ssh://[user@]host[:port]/path` and scp-like `[user@]host:path` are SSH. Returns
 * undefined for anything else (the URL checks themselves belong to @agentproto/git).
 */
export function locate(url: string): GitLocation | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'https' || scheme === 'http' || scheme === 'ssh') {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return undefined;
    }
    const host = parsed.hostname;
    if (host === '') return undefined;
    const port = parsed.port;
    if (scheme === 'ssh') {
      const knownHostsName = port && port !== '22' ? `[${host}]:${port}` : host;
      return { transport: 'ssh', knownHostsName, egress: port ? `${host}:${port}` : host };
    }
    return { transport: 'https', knownHostsName: host, egress: port ? `${host}:${port}` : host };
  }
  if (scheme !== undefined) return undefined;
  // scp-like: [user@]host:path, where host has no `/` (else it is a local path).
  const match = /^(?:[^@/:]+@)?([^@/:[\]]+|\[[^\]]+\]):(.+)$/.exec(url);
  if (!match?.[1] || match[1].startsWith('-')) return undefined;
  return { transport: 'ssh', knownHostsName: match[1], egress: match[1] };
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
