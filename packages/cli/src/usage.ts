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

Options:
  --root DIR        the store (default: ${defaultCacheRoot()})
  --json            print one JSON document on stdout
  --provider ID     cache put: the provider recorded in the key (default: local)
  --name NAME       cache put: declare the folder as {"name": NAME} instead of its path
  --quarantine      cache verify: move corrupt objects to quarantine/ and drop their keys
  -h, --help        show this help
  --version         print the version

Exit codes: 0 done, 1 failed or corrupt objects found, 2 wrong command line.
`;
}
