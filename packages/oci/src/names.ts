import { RegistryError } from './errors.js';

/** OCI distribution spec: repository name components separated by `/`. */
const REPOSITORY = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
/** Only SHA-256 digests are written or accepted. */
const DIGEST = /^sha256:[a-f0-9]{64}$/;

export function isTag(value: string): boolean {
  return TAG.test(value);
}

export function isDigest(value: string): boolean {
  return DIGEST.test(value);
}

export function checkRepository(repository: string): string {
  if (typeof repository !== 'string' || repository.length > 255 || !REPOSITORY.test(repository)) {
    throw new RegistryError(
      'REGISTRY_INVALID',
      `${JSON.stringify(shown(repository))} is not an OCI repository name (lower-case components separated by "/")`,
    );
  }
  return repository;
}

export function checkReference(reference: string): string {
  if (typeof reference !== 'string' || !(TAG.test(reference) || DIGEST.test(reference))) {
    throw new RegistryError(
      'REGISTRY_INVALID',
      `${JSON.stringify(shown(reference))} is neither a tag nor a sha256 digest`,
    );
  }
  return reference;
}

/** `host[:port]/repository[:tag][@sha256:…]`, as `docker` and `oras` spell artifact references. */
export interface ArtifactReference {
  /** `host` or `host:port`. */
  registry: string;
  repository: string;
  tag: string | undefined;
  digest: string | undefined;
}

/**
 * Parses an artifact reference. The registry part is required (no implicit Docker Hub):
 * the first component is the registry when it holds a `.` or `:` or is `localhost`. A
 * reference with neither tag nor digest is refused rather than defaulted to `latest`, so
 * what is pushed or pulled is always named. No scheme and no credentials: both come from
 * options.
 */
export function parseReference(text: string): ArtifactReference {
  const refuse = (why: string) =>
    new RegistryError('REGISTRY_INVALID', `artifact reference ${JSON.stringify(shown(text))}: ${why}`);
  if (typeof text !== 'string' || text.length === 0 || text.length > 1024) throw refuse('not a reference');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw refuse('give host[:port]/repository:tag without a scheme');
  if (text.includes('@') && !/@sha256:/.test(text)) throw refuse('only sha256 digests are accepted after "@"');
  let rest = text;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw refuse('the digest is not sha256:<64 hex>');
  }
  const slash = rest.indexOf('/');
  if (slash === -1) throw refuse('no registry host (host[:port]/repository:tag)');
  const registry = rest.slice(0, slash);
  if (!(registry.includes('.') || registry.includes(':') || registry === 'localhost'))
    throw refuse('the first component is not a registry host');
  if (!/^[A-Za-z0-9.-]+(?::[0-9]{1,5})?$/.test(registry) && !/^\[[0-9a-fA-F:]+\](?::[0-9]{1,5})?$/.test(registry))
    throw refuse('the registry host is malformed');
  let repository = rest.slice(slash + 1);
  let tag: string | undefined;
  const colon = repository.lastIndexOf(':');
  if (colon !== -1) {
    tag = repository.slice(colon + 1);
    repository = repository.slice(0, colon);
    if (!TAG.test(tag)) throw refuse(`${JSON.stringify(tag)} is not a valid tag`);
  }
  if (!REPOSITORY.test(repository)) throw refuse(`${JSON.stringify(repository)} is not an OCI repository name`);
  if (tag === undefined && digest === undefined) throw refuse('name a tag or a digest');
  return { registry, repository, tag, digest };
}

/** A value for a message: a string as it is, anything else by its type (String() throws on some objects). */
export function shown(value: unknown): string {
  return typeof value === 'string' ? value : `(${value === null ? 'null' : typeof value})`;
}
