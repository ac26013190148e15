import { gitProvider } from './git/provider.js';
import { ProviderRegistry } from './registry.js';

/** The registry a host gets without configuring one: the built-in git provider. */
export function defaultRegistry(): ProviderRegistry {
  return new ProviderRegistry([gitProvider()]);
}
