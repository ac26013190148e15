import type { RegistryAuth } from '@agentproto/oci';
import { CommandError } from './command-error.js';

/**
 * The environment variables registry credentials are read from; they are never options. Here,
 * apart from the registry client, so that a command that only reads them loads no store.
 */
export const REGISTRY_ENV = Object.freeze({
  username: 'AGENTPROTO_REGISTRY_USERNAME',
  password: 'AGENTPROTO_REGISTRY_PASSWORD',
  token: 'AGENTPROTO_REGISTRY_TOKEN',
});

/**
 * The auth callback for `plugin push|pull` and `cache push|pull`, from the environment.
 * Credentials never come from the command line, where `ps` and shell history would show
 * them; the callback hands them to the OCI client, which puts them only in Authorization
 * headers. Nothing set: anonymous. A Basic challenge takes the username and password; a
 * bearer challenge takes the token as it is, or else the username and password for the
 * registry's token service. An empty variable counts as unset.
 */
export function registryAuthFromEnv(env: NodeJS.ProcessEnv = process.env): RegistryAuth | undefined {
  const read = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const username = read(REGISTRY_ENV.username);
  const password = read(REGISTRY_ENV.password);
  const token = read(REGISTRY_ENV.token);
  if ((username === undefined) !== (password === undefined)) {
    throw new CommandError(`${REGISTRY_ENV.username} and ${REGISTRY_ENV.password} go together: set both or neither`);
  }
  const basic = username !== undefined && password !== undefined ? { username, password } : undefined;
  if (basic === undefined && token === undefined) return undefined;
  return (challenge) => {
    if (challenge.scheme === 'basic') return basic;
    return token !== undefined ? { token } : basic;
  };
}
