import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * The platform cache folder: `$XDG_CACHE_HOME/agentproto`, else `~/.cache/agentproto`.
 * A relative XDG_CACHE_HOME is ignored, as the XDG base directory spec requires.
 */
export function defaultCacheRoot(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'agentproto');
  return join(home, '.cache', 'agentproto');
}
