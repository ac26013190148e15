/** The environment variables registry credentials are read from; they are never options. */
export const REGISTRY_ENV = Object.freeze({
  username: 'AGENTPROTO_REGISTRY_USERNAME',
  password: 'AGENTPROTO_REGISTRY_PASSWORD',
  token: 'AGENTPROTO_REGISTRY_TOKEN',
});
