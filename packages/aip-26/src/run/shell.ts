/**
 * Shell operators that make a `run` string a shell command wherever they appear, quoted
 * or not (ADAPTER.md "Shell command form"): `&&`, `||`, `|`, `;`, `>`, `<`, backtick,
 * `$(`, `${`. We add the newline: bash reads it as `;`, and a multi-line YAML block is a
 * script. A single `&` is not in ADAPTER.md's list and is not a trigger here either.
 */
const SHELL_OPERATOR = /&&|\||;|>|<|`|\$\(|\$\{|\n/;

/** Whether `text` holds one of the shell operators above. */
export function hasShellOperator(text: string): boolean {
  return SHELL_OPERATOR.test(text);
}

/** Word splitting of a `run` string, or why it cannot be split. */
export type Words = { ok: true; words: string[] } | { ok: false; reason: 'unbalanced-quote' };

/**
 * Splits `text` into words as bash would for a simple command: unquoted spaces and tabs
 * separate words; `'…'` and `"…"` group (quotes removed, nothing expanded inside). Only
 * used once `hasShellOperator` is false, so no expansion can be pending. A lone quote
 * makes the string ambiguous: we refuse rather than guess.
 */
export function splitWords(text: string): Words {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (const ch of text) {
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (ch === ' ' || ch === '\t') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote !== undefined) return { ok: false, reason: 'unbalanced-quote' };
  if (inWord) words.push(word);
  return { ok: true, words };
}
