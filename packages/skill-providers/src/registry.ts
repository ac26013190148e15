import { ProviderRegistrationError, UnknownProviderError, type EntryRef } from './errors.js';
import type { SkillContentProvider } from './provider.js';
import { importFrom } from './import-from.js';

const OPERATIONS = ['validate', 'egressHosts', 'resolve', 'fetch'] as const;

/**
 * The providers a host allows, by id. Built from provider objects, or from packages the
 * deployment names in the host's own configuration. Agent configuration only ever names
 * an id: it cannot add a module or an install command.
 */
export class ProviderRegistry {
  private readonly byId = new Map<string, SkillContentProvider>();

  constructor(providers: Iterable<SkillContentProvider>) {
    for (const provider of providers) {
      assertProvider(provider);
      if (this.byId.has(provider.id)) throw new ProviderRegistrationError(provider.id, 'another provider has this id');
      this.byId.set(provider.id, provider);
    }
  }

  /** The provider with this id; an unknown one fails, listing the ids that exist. */
  get(id: string, entry?: EntryRef): SkillContentProvider {
    const provider = this.byId.get(id);
    if (!provider) throw new UnknownProviderError(id, this.ids(), entry);
    return provider;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  ids(): string[] {
    return [...this.byId.keys()].sort();
  }
}

export function createRegistry(providers: Iterable<SkillContentProvider>): ProviderRegistry {
  return new ProviderRegistry(providers);
}

export interface LoadRegistryOptions {
  /** Providers to start with (the built-ins, usually). */
  providers?: Iterable<SkillContentProvider>;
  /**
   * Deployment-owned packages, by module specifier, from the host's configuration. Each
   * exports `providers` (an array of provider objects) or a default export that is one.
   */
  packages?: readonly string[];
  /**
   * Where package names are looked up: the folder whose node_modules (and its parents')
   * hold the deployment's packages. Default: the working directory.
   */
  from?: string;
  /** How a specifier is imported; by default `importFrom(from)`. */
  importModule?: (specifier: string) => Promise<unknown>;
}

/** A registry of `providers` plus every provider the named packages export. */
export async function loadRegistry(options: LoadRegistryOptions = {}): Promise<ProviderRegistry> {
  const importModule = options.importModule ?? importFrom(options.from ?? process.cwd());
  const all = [...(options.providers ?? [])];
  for (const specifier of options.packages ?? []) {
    let module: unknown;
    try {
      module = await importModule(specifier);
    } catch (error) {
      throw new ProviderRegistrationError(
        specifier,
        `the package cannot be loaded (${(error as Error)?.message ?? String(error)})`,
      );
    }
    const exported =
      (module as { providers?: unknown; default?: unknown }).providers ?? (module as { default?: unknown }).default;
    if (!Array.isArray(exported)) {
      throw new ProviderRegistrationError(specifier, 'the package exports no `providers` array (nor a default one)');
    }
    all.push(...(exported as SkillContentProvider[]));
  }
  return new ProviderRegistry(all);
}

function assertProvider(provider: unknown): asserts provider is SkillContentProvider {
  const candidate = provider as Partial<SkillContentProvider> | null;
  const id = typeof candidate?.id === 'string' ? candidate.id : '(no id)';
  if (
    !candidate ||
    typeof candidate !== 'object' ||
    typeof candidate.id !== 'string' ||
    !/^[a-z0-9][a-z0-9._-]*$/.test(candidate.id)
  ) {
    throw new ProviderRegistrationError(id, 'a provider needs an `id` of lower-case letters, digits, ".", "_" or "-"');
  }
  for (const operation of OPERATIONS) {
    if (typeof candidate[operation] !== 'function')
      throw new ProviderRegistrationError(id, `\`${operation}\` is not a function`);
  }
}
