import { createRequire } from 'node:module';

/**
 * fastest-levenshtein, loaded by the first mistyped word: a command typed right never needs
 * it, and resolving and loading it cost ~2 ms of every start.
 */
let distance: typeof import('fastest-levenshtein').distance | undefined;

/**
 * The candidate closest to a mistyped word, or undefined when none is close: at most two
 * edits (insertions, deletions, substitutions; Levenshtein, so a swap of neighbours is two,
 * `jsno` → `json`) and fewer edits than the word has characters, or a word the candidate
 * starts with (`verif` → `verify`). Letter case is no edit. Ties go to the candidate listed first.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  distance ??= (createRequire(import.meta.url)('fastest-levenshtein') as typeof import('fastest-levenshtein')).distance;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const edits = distance(word.toLowerCase(), candidate.toLowerCase());
    if (edits < bestDistance) {
      best = candidate;
      bestDistance = edits;
    }
  }
  if (best !== undefined && bestDistance <= Math.min(2, word.length - 1)) return best;
  if (word.length >= 2) return candidates.find((candidate) => candidate.startsWith(word));
  return undefined;
}
