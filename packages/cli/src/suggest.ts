/**
 * The candidate closest to a mistyped word, or undefined when none is close: at most two
 * edits (an insertion, a deletion, a substitution, or two neighbours swapped) and fewer edits
 * than the word has characters, or a word the candidate starts with (`verif` → `verify`).
 * Ties go to the candidate listed first.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== undefined && bestDistance <= Math.min(2, word.length - 1)) return best;
  if (word.length >= 2) return candidates.find((candidate) => candidate.startsWith(word));
  return undefined;
}

/**
 * The Damerau-Levenshtein distance in its optimal-string-alignment form: the fewest
 * insertions, deletions, substitutions and swaps of neighbours that turn `a` into `b`.
 * Words on a command line are short, so the full table is cheap.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, d[i - 2]![j - 2]! + 1);
      d[i]![j] = value;
    }
  }
  return d[a.length]![b.length]!;
}
