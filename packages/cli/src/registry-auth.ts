import type { ContentStoreOptions, OciRemote } from '@agentproto/content-cache';
import { printable } from './format.js';
import { registryAuthFromEnv } from './registry-env.js';
import { type Invocation, flagOption, textOption } from './table.js';
import type { Terminal } from './terminal.js';
import { UsageError } from './usage.js';

interface RemoteFlags {
  remote?: string;
  repository?: string;
  'insecure-http'?: boolean;
}

/**
 * The registry of `--remote` and `--repository`; credentials from the environment only. The
 * content store's client is loaded here, not at start: a command without `--remote` (a
 * workspace-only `code bundle`) never loads it.
 */
export async function openRemote(command: string, values: RemoteFlags): Promise<OciRemote> {
  const { remote: url, repository } = values;
  if (url === undefined || url === '') throw new UsageError(`${command} needs --remote URL (https://host[:port])`);
  if (repository === undefined || repository === '') throw new UsageError(`${command} needs --repository NAME`);
  const insecure = values['insecure-http'] === true;
  if (/^http:/i.test(url) && !insecure)
    throw new UsageError(`${command}: --remote ${url} is plain http; pass --insecure-http to allow it`);
  const auth = registryAuthFromEnv();
  const { ociRemote } = await import('@agentproto/content-cache');
  return ociRemote({ url, repository, allowInsecureHttp: insecure, ...(auth === undefined ? {} : { auth }) });
}

/**
 * The store options for commands that can share their store through a registry (`skills`,
 * `code`): none without `--remote`; with it, the remote tier, and its warnings on stderr,
 * the first of each code (a registry that is down or sends bad content never fails the
 * command).
 */
export async function remoteTier(
  command: string,
  values: RemoteFlags,
  term: Terminal,
): Promise<Pick<ContentStoreOptions, 'remote' | 'onEvent'>> {
  if (values.remote === undefined) {
    if (values.repository !== undefined) throw new UsageError(`${command}: --repository needs --remote`);
    return {};
  }
  // One line per kind of failure: a registry that is down would otherwise repeat itself for
  // every pull, push and fact the command touches while it is bypassed.
  const shown = new Set<string>();
  return {
    remote: await openRemote(command, values),
    onEvent: (event) => {
      if (event.type !== 'remote-warning' || shown.has(event.code)) return;
      shown.add(event.code);
      term.stderr.write(
        `${term.yellow('warning:')} ${printable(`${event.operation} at ${event.remote} failed (${event.code}): ${event.message}`)}\n`,
      );
    },
  };
}

/** The remote-tier flags of a command line: `--remote URL --repository NAME [--insecure-http]`. */
export function remoteFlags(invocation: Invocation): RemoteFlags {
  const remote = textOption(invocation, 'remote');
  const repository = textOption(invocation, 'repository');
  return {
    ...(remote === undefined ? {} : { remote }),
    ...(repository === undefined ? {} : { repository }),
    'insecure-http': flagOption(invocation, 'insecure-http'),
  };
}
