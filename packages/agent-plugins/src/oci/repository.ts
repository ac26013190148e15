import { type ArtifactReference, OciClient, type RegistryAuth, parseReference } from '@agentproto/oci';

/** How to reach the registry. Credentials come only through `auth`, never in the reference. */
export interface PluginRegistryOptions {
  /**
   * Asked for credentials when the registry challenges (HTTP Basic, or the bearer token flow).
   * Called with the challenge; returns `{ username, password }`, `{ token }` or undefined.
   * Default: anonymous. Credentials never appear in an error or a returned reference.
   */
  auth?: RegistryAuth;
  /**
   * Speak plain `http://` to the registry named in the reference (a registry on loopback, a
   * test). Default false: `https://` only.
   */
  allowInsecureHttp?: boolean;
  /** Replaces the global fetch (a proxy agent, a test double of the network). Default: globalThis.fetch. */
  fetch?: typeof globalThis.fetch;
  /** Milliseconds to wait for each response and each chunk of a body. Default 15 000. */
  timeoutMs?: number;
  /** Aborts the push or pull; what was written so far is removed (pull) or left unreferenced (push). */
  signal?: AbortSignal;
}

export interface OpenedRepository {
  client: OciClient;
  parsed: ArtifactReference;
  /** The reference rebuilt from its parts, for messages: `host[:port]/repository[:tag][@digest]`. */
  label: string;
}

/** Parses `reference` and opens a client for its repository. Throws RegistryError REGISTRY_INVALID for a bad reference. */
export function openRepository(reference: string, options: PluginRegistryOptions): OpenedRepository {
  const parsed = parseReference(reference);
  const allowInsecureHttp = options.allowInsecureHttp ?? false;
  const client = new OciClient({
    url: `${allowInsecureHttp ? 'http' : 'https'}://${parsed.registry}`,
    repository: parsed.repository,
    allowInsecureHttp,
    ...(options.auth === undefined ? {} : { auth: options.auth }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  return { client, parsed, label: referenceLabel(parsed) };
}

function referenceLabel(parsed: ArtifactReference): string {
  return `${parsed.registry}/${parsed.repository}${parsed.tag === undefined ? '' : `:${parsed.tag}`}${parsed.digest === undefined ? '' : `@${parsed.digest}`}`;
}
