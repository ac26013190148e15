/** Human-readable size: 512 B, 1.5 KiB, 12.0 MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * Shortens a 64-hex SHA-256 (bare or `sha256:`-prefixed) to its first 12 digits, as git
 * abbreviates commits; anything else is returned whole. Human output only: --json is full.
 */
export function shortHash(value: string): string {
  const match = /^(sha256:)?([0-9a-f]{64})$/.exec(value);
  return match ? `${match[1] ?? ''}${match[2]!.slice(0, 12)}` : value;
}

/** Rows padded so every column lines up; the last column is not padded. */
export function alignColumns(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * Characters a terminal must never receive raw from a name we print: C0 and C1 controls
 * and DEL (an escape sequence can rewrite the screen or the title), and the invisible
 * format characters (bidirectional overrides, zero-width marks) that make text read
 * differently from what it is.
 */
const UNSAFE_CHARACTER = /[\p{Cc}\p{Cf}\u2028\u2029]/u;
const UNSAFE_CHARACTERS = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

/**
 * Characters a POSIX shell gives no meaning to anywhere in a word: letters and digits
 * (any script), and `_ @ % + = : , . / -` and `#`. `#` starts a comment and `=` an
 * expansion in zsh only at the start of a word, so those two are safe after it.
 */
const SHELL_SAFE = /^[\p{L}\p{M}\p{N}_@%+:,./-][\p{L}\p{M}\p{N}_@%+=:,./#-]*$/u;
/**
 * The same, for ASCII alone: tried first, so a plain path never builds SHELL_SAFE's Unicode
 * property sets (~0.8 ms of a command's start, before its first line of output).
 */
const SHELL_SAFE_ASCII = /^[A-Za-z0-9_@%+:,./-][A-Za-z0-9_@%+=:,./#-]*$/;

/**
 * A path as a shell word, so a user can paste it: plain paths unchanged, anything else in
 * single quotes the POSIX way (`'it'\''s here'`). Controls and invisible format characters
 * go in `$'…'` escapes (`'a'$'\n''b'`, as GNU ls prints them), so none reaches the terminal
 * raw; bash, zsh, ksh and POSIX.1-2024 shells read them back.
 */
export function shellQuote(path: string): string {
  if (SHELL_SAFE_ASCII.test(path) || SHELL_SAFE.test(path)) return path;
  if (path === '') return "''";
  // Runs of ordinary characters and runs of unsafe ones, in order.
  const runs = path.match(/[\p{Cc}\p{Cf}\u2028\u2029]+|[^\p{Cc}\p{Cf}\u2028\u2029]+/gu) ?? [];
  return runs
    .map((run) =>
      UNSAFE_CHARACTER.test(run)
        ? `$'${Array.from(run, escapeCharacter).join('')}'`
        : // A quote cannot sit inside single quotes: close them, add \', open them again.
          run
            .split("'")
            .map((piece) => (piece === '' ? '' : `'${piece}'`))
            .join("\\'"),
    )
    .join('');
}

/**
 * One line of human text with every control and invisible format character shown as an
 * escape (`\n`, `\x1b`, `\u202e`), for messages that embed names we did not choose (a
 * library's error, a finding, a registry's warning). Printable text is unchanged.
 */
export function printable(text: string): string {
  return text.replace(UNSAFE_CHARACTERS, escapeCharacter);
}

const NAMED_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeCharacter(char: string): string {
  const named = NAMED_ESCAPES[char];
  if (named !== undefined) return named;
  const code = char.codePointAt(0)!;
  const hex = code.toString(16);
  // \x only below 0x80: bash reads $'\x9b' as one raw byte, not the character U+009B.
  if (code < 0x80) return `\\x${hex.padStart(2, '0')}`;
  return code <= 0xffff ? `\\u${hex.padStart(4, '0')}` : `\\U${hex.padStart(8, '0')}`;
}
