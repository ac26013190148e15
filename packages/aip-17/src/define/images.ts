import { RunnerHostError, RunnerImageError } from './errors.js';
import type { RunnerLanguage, SandboxTemplate } from './types.js';

const TIERS: Readonly<Record<SandboxTemplate['cost_tier'], number>> = { light: 0, standard: 1, heavy: 2 };
const LANGUAGES: readonly string[] = ['node', 'python', 'multi'];

const isStringList = (v: unknown): v is readonly string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/**
 * Refuses a registry the auto-pick could not rank: an entry without an id, language list,
 * baked list or known cost tier, and above all two entries with one id, which would make
 * "the same registry" pick differently depending on order.
 */
export function checkRegistry(images: readonly SandboxTemplate[]): void {
  if (!Array.isArray(images)) throw new RunnerHostError('images', 'must be an array of sandbox templates');
  const ids = new Set<string>();
  images.forEach((t: SandboxTemplate | null | undefined, i) => {
    if (t === null || typeof t !== 'object') throw new RunnerHostError(`images/${i}`, 'must be an object');
    if (typeof t.id !== 'string' || t.id === '')
      throw new RunnerHostError(`images/${i}/id`, 'must be a non-empty string');
    if (ids.has(t.id)) throw new RunnerHostError(`images/${i}/id`, `repeats the id ${JSON.stringify(t.id)}`);
    ids.add(t.id);
    if (!isStringList(t.language) || !t.language.every((l) => LANGUAGES.includes(l)))
      throw new RunnerHostError(`images/${i}/language`, 'must be a list of "node", "python", "multi"');
    if (t.baked === null || typeof t.baked !== 'object' || !isStringList(t.baked.native))
      throw new RunnerHostError(`images/${i}/baked/native`, 'must be a list of package names');
    if (!Object.hasOwn(TIERS, t.cost_tier))
      throw new RunnerHostError(`images/${i}/cost_tier`, 'must be "light", "standard" or "heavy"');
  });
}

/** Sorted ids, for the errors: the same list whatever the registry's order. */
const idsOf = (images: readonly SandboxTemplate[]) => images.map((t) => t.id).sort(byCodeUnits);

// Code-unit order, not localeCompare: the pick must not depend on the host's locale.
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Lightest tier first; among equals, the smaller id. A total order, since ids are unique. */
const lightestFirst = (a: SandboxTemplate, b: SandboxTemplate) =>
  TIERS[a.cost_tier] - TIERS[b.cost_tier] || byCodeUnits(a.id, b.id);

/**
 * The image of a sandbox runner (ADAPTER.md "Image resolution"): the explicit one if the
 * registry has it; otherwise the lightest template of the language that bakes every native
 * need, else the lightest of the language (the natives are then installed at cold start).
 * Deterministic: the same needs and the same set of templates give the same id, in any order.
 */
export function resolveImage(
  explicit: string | undefined,
  needs: { readonly language: RunnerLanguage; readonly native: readonly string[] },
  images: readonly SandboxTemplate[] | undefined,
): string {
  const registry = images ?? [];
  if (explicit !== undefined) {
    if (registry.some((t) => t.id === explicit)) return explicit;
    throw new RunnerImageError('AIP17_IMAGE_UNKNOWN', {
      image: explicit,
      available: idsOf(registry),
      reason: `image ${JSON.stringify(explicit)} is not in the host's sandbox registry`,
    });
  }
  const ofLanguage = registry.filter((t) => t.language.includes(needs.language));
  const baking = ofLanguage.filter((t) => needs.native.every((n) => t.baked.native.includes(n)));
  const pick = (baking.length > 0 ? baking : ofLanguage).sort(lightestFirst)[0];
  if (pick !== undefined) return pick.id;
  throw new RunnerImageError('AIP17_IMAGE_UNRESOLVED', {
    available: idsOf(registry),
    reason:
      registry.length === 0
        ? 'a sandbox runner needs an image, and the host has no sandbox registry'
        : `no image in the host's sandbox registry serves language ${JSON.stringify(needs.language)}`,
  });
}
