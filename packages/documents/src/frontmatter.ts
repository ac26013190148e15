/**
 * Where the YAML front matter of a Markdown file (SKILL.md, CODE.md) is:
 * - `missing`: the first line is not exactly `---`;
 * - `unterminated`: no later line is exactly `---`;
 * - `too-large`: the closing line is further than `maxBytes` UTF-16 units past the opening
 *   one (the front matter is then never cut out, let alone parsed);
 * - `found`: `yaml` is the text between the delimiter lines, `body` what follows the
 *   closing line (line endings kept), `yamlStart` the offset of `yaml` in `text`.
 *
 * A delimiter line is `---` before `\n` or `\r\n` (or the end of the text for the closing
 * one). Lines are found with indexOf, never split: a body of millions of lines costs no
 * allocation.
 */
export type FrontmatterBlock =
  | { found: 'missing' }
  | { found: 'unterminated' }
  | { found: 'too-large'; limit: number }
  | { found: 'block'; yaml: string; yamlStart: number; body: string };

export function findFrontmatter(text: string, maxBytes: number): FrontmatterBlock {
  const opening = delimiterEnd(text, 0);
  if (opening === undefined) return { found: 'missing' };
  const yamlStart = opening;
  // The closing line starts at yamlStart, or right after a "\n" at or past it.
  for (let lineStart = yamlStart; lineStart <= text.length; ) {
    if (lineStart - yamlStart > maxBytes) {
      return hasDelimiterLineAfter(text, lineStart)
        ? { found: 'too-large', limit: maxBytes }
        : { found: 'unterminated' };
    }
    const next = delimiterEnd(text, lineStart);
    if (next !== undefined)
      return { found: 'block', yaml: text.slice(yamlStart, lineStart), yamlStart, body: text.slice(next) };
    const nl = text.indexOf('\n', lineStart);
    if (nl === -1) break;
    lineStart = nl + 1;
  }
  return { found: 'unterminated' };
}

/** The offset past the line ending when the line at `start` is exactly `---`, else undefined. */
function delimiterEnd(text: string, start: number): number | undefined {
  if (!text.startsWith('---', start)) return undefined;
  const after = start + 3;
  if (after === text.length) return after;
  if (text[after] === '\n') return after + 1;
  if (text[after] === '\r' && text[after + 1] === '\n') return after + 2;
  return undefined;
}

function hasDelimiterLineAfter(text: string, from: number): boolean {
  for (let at = text.indexOf('\n---', from - 1); at !== -1; at = text.indexOf('\n---', at + 1)) {
    if (delimiterEnd(text, at + 1) !== undefined) return true;
  }
  return false;
}
