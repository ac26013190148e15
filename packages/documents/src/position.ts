/**
 * Where in a document an error is, told as an editor tells it, and the one line it is on,
 * shown with a caret under the spot (`excerpt` of a DocumentSyntaxError).
 *
 * - Lines end at `\n` (a `\r` before it belongs to the ending); `firstLine` is the number of
 *   the text's first line in its file (2 for front matter, whose `---` is line 1). The end of
 *   a text ending in a line break is the end of its last line.
 * - Columns count characters (Unicode code points) from 1: `é`, `名` and `😀` are one column
 *   each, never their UTF-8 bytes or UTF-16 units. A byte order mark is not a column.
 */
export interface TextPosition {
  line: number;
  column: number;
  excerpt: string;
}

/** Most characters of the line shown: a longer line is cut around the column, `…` where it is cut. */
const EXCERPT_WIDTH = 120;
const TAB_STOP = 4;

/** The line, column and excerpt of a UTF-16 offset into `text` (clamped to the text). */
export function positionAt(text: string, offset: number, firstLine = 1): TextPosition {
  let at = Math.max(0, Math.min(offset, text.length));
  // The end of a text that ends its last line: shown at the end of that line, not on an empty
  // line after it that an editor does not number.
  if (at === text.length && text.endsWith('\n')) at -= text.endsWith('\r\n') ? 2 : 1;
  let line = firstLine;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line += 1;
  let start = at === 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
  if (start === 0 && text.charCodeAt(0) === 0xfeff) start = 1;
  let end = text.indexOf('\n', at);
  if (end === -1) end = text.length;
  if (end > start && text.charCodeAt(end - 1) === 0x0d) end -= 1;
  // An offset inside the line ending (the `\r` of `\r\n`) or a cut surrogate pair is shown at
  // the character it belongs to.
  let caret = Math.max(start, Math.min(at, end));
  if (caret > start && isLowSurrogate(text.charCodeAt(caret)) && isHighSurrogate(text.charCodeAt(caret - 1)))
    caret -= 1;
  const column = countCodePoints(text, start, caret) + 1;
  return { line, column, excerpt: renderExcerpt(text, start, end, caret, line) };
}

/** The offset of a 1-based line and UTF-16 column (as smol-toml reports them), or undefined past the text. */
export function offsetOf(text: string, line: number, utf16Column: number): number | undefined {
  let start = 0;
  for (let l = 1; l < line; l += 1) {
    const nl = text.indexOf('\n', start);
    if (nl === -1) return undefined;
    start = nl + 1;
  }
  return Math.min(text.length, start + Math.max(0, utf16Column - 1));
}

function countCodePoints(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to; i += 1) {
    const c = text.charCodeAt(i);
    // The second half of a surrogate pair is not a character of its own.
    if (!(isLowSurrogate(c) && i > from && isHighSurrogate(text.charCodeAt(i - 1)))) count += 1;
  }
  return count;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/**
 * `  L | <line>` and `    | <spaces>^`. At most EXCERPT_WIDTH characters of the line, around
 * the caret; tabs expanded to stops of 4 and control, bidirectional and separator characters
 * escaped (`\x1b`, `\u202e`), each counted at the width it is shown with, wide (East Asian)
 * characters as two, so the caret stands under the character in a terminal.
 */
function renderExcerpt(text: string, start: number, end: number, caret: number, line: number): string {
  // The window: EXCERPT_WIDTH characters, a third of them before the caret when the line
  // goes on after the window, more when it ends sooner.
  let from = caret;
  let before = 0;
  for (; before < EXCERPT_WIDTH / 3 && from > start; before += 1) from = stepBack(text, from, start);
  let to = caret;
  let after = 0;
  for (; before + after < EXCERPT_WIDTH && to < end; after += 1) to = stepForward(text, to);
  for (; before + after < EXCERPT_WIDTH && from > start; before += 1) from = stepBack(text, from, start);
  let shown = from > start ? '…' : '';
  let width = shown.length;
  let caretWidth = -1;
  for (let i = from; i < to; ) {
    if (i === caret) caretWidth = width;
    const code = text.codePointAt(i)!;
    i += code > 0xffff ? 2 : 1;
    const glyph = code === 0x09 ? ' '.repeat(TAB_STOP - (width % TAB_STOP)) : display(code);
    shown += glyph;
    // A tab or an escape is as wide as its text; a character as a terminal shows it.
    width += code === 0x09 || glyph.length > 2 ? glyph.length : isWide(code) ? 2 : 1;
  }
  if (caretWidth === -1) caretWidth = width;
  if (to < end) shown += '…';
  const number = String(line);
  return `  ${number} | ${shown}\n  ${' '.repeat(number.length)} | ${' '.repeat(caretWidth)}^`;
}

function stepBack(text: string, i: number, start: number): number {
  return i - 1 > start && isLowSurrogate(text.charCodeAt(i - 1)) && isHighSurrogate(text.charCodeAt(i - 2))
    ? i - 2
    : i - 1;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

function stepForward(text: string, i: number): number {
  return (text.codePointAt(i) ?? 0) > 0xffff ? i + 2 : i + 1;
}

/** How a character is shown: itself, or escaped when it is invisible or changes how the line reads. */
function display(code: number): string {
  if (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0xfeff ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x2028 && code <= 0x202e) ||
    (code >= 0x2060 && code <= 0x2069) ||
    (code >= 0xd800 && code <= 0xdfff)
  )
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  return String.fromCodePoint(code);
}

/**
 * East Asian Wide and Fullwidth characters and emoji, which a terminal shows two columns wide:
 * the main blocks (Hangul Jamo, CJK, Hangul syllables, fullwidth forms, emoji), enough to keep
 * the caret under the character on the lines a configuration holds.
 */
function isWide(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0x303e) ||
    (code >= 0x3041 && code <= 0x33ff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0xa000 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1f64f) ||
    (code >= 0x1f900 && code <= 0x1f9ff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  );
}
