import { LineCounter, isMap, isSeq, parseDocument } from 'yaml';
import type { Node as YamlNode } from 'yaml';
import { type Finding, findingFrom } from '../findings.js';
import { SKILL_FINDING_CODES, type SkillFindingCode } from './codes.js';
import { pointerToken } from '../text.js';

export { pointerToken };

export interface Frontmatter {
  /** The frontmatter mapping, or undefined when the file has none that parses to a mapping. */
  data: Record<string, unknown> | undefined;
  /** The Markdown after the closing "---" line, as written (line endings kept). */
  body: string;
  /** Problems with the file and its frontmatter, at `<file>#/frontmatter`. Messages never quote a value. */
  problems: Finding[];
}

// An alias may legitimately repeat a value, but not expand a small file into a huge one.
const MAX_ALIAS_COUNT = 100;

const DELIMITER = '---';

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Splits SKILL.md into its YAML frontmatter and Markdown body, and parses the frontmatter.
 *
 * | Input                                   | Choice                                                                 |
 * |-----------------------------------------|------------------------------------------------------------------------|
 * | not UTF-8                               | skill.not-utf8, nothing parsed                                         |
 * | UTF-8 byte order mark                   | skill.bom; the rest is still parsed, so every other problem shows too. The reference validator reads the file as text starting with U+FEFF, not "---", and finds no frontmatter |
 * | CRLF line endings (or mixed)            | accepted: "---\r\n" opens and closes, YAML reads CRLF as a line break; the reference validator reads text with universal newlines and accepts it too |
 * | delimiter lines                         | exactly "---" (before the line ending); "--- " or "----" is not one    |
 * | closing "---" at the end without a line ending | accepted, the body is empty                                    |
 * | YAML                                    | YAML 1.2 core schema, the types ordinary readers agree on (no dates, `yes` stays a string) |
 * | explicit tags (`!!binary`, `!custom`)   | skill.frontmatter-invalid-yaml: tags are not resolved, so no reader-specific type enters |
 * | duplicate keys (also `1` and `"1"`)     | skill.frontmatter-duplicate-key                                        |
 * | a list or map as a key, several documents | skill.frontmatter-invalid-yaml                                       |
 * | empty frontmatter, a list or a scalar   | skill.frontmatter-not-mapping                                          |
 *
 * `__proto__` is read as an ordinary key, never as the object's prototype. YAML error messages are
 * not passed on: they quote the source line, which may hold a secret; only the line and column are.
 * Pure.
 */
export function parseFrontmatter(bytes: Uint8Array, file: string): Frontmatter {
  const problems: Finding[] = [];
  const report = (code: SkillFindingCode, message: string, pointer = '/frontmatter') => {
    problems.push(findingFrom(SKILL_FINDING_CODES, code, `${file}#${pointer}`, message));
  };

  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    report('skill.not-utf8', 'is not valid UTF-8', '');
    return { data: undefined, body: '', problems };
  }
  // Line numbers in messages count from the file's first line, so the BOM changes none of them.
  if (text.startsWith('\uFEFF')) {
    report('skill.bom', 'starts with a byte order mark before the frontmatter', '');
    text = text.slice(1);
  }

  const lines = splitLines(text);
  if (lines[0]?.content !== DELIMITER) {
    report('skill.frontmatter-missing', 'the first line must be "---"');
    return { data: undefined, body: text, problems };
  }
  const close = lines.findIndex((line, i) => i > 0 && line.content === DELIMITER);
  const closing = lines[close];
  if (closing === undefined) {
    report('skill.frontmatter-unterminated', 'has no closing "---" line');
    return { data: undefined, body: '', problems };
  }
  const yamlStart = lines[0].next;
  const yamlText = text.slice(yamlStart, closing.start);
  const body = text.slice(closing.next);

  const lineCounter = new LineCounter();
  const doc = parseDocument(yamlText, {
    version: '1.2',
    schema: 'core',
    uniqueKeys: true,
    resolveKnownTags: false,
    prettyErrors: false,
    lineCounter,
  });
  const where = (offset: number | undefined) => {
    const pos = lineCounter.linePos(offset ?? 0);
    // +1: the opening "---" is the file's first line.
    return `line ${pos.line + 1}, column ${pos.col}`;
  };
  const yamlIssues = [...doc.errors, ...doc.warnings];
  if (yamlIssues.length > 0) {
    for (const issue of yamlIssues) {
      if (issue.code === 'DUPLICATE_KEY') report('skill.frontmatter-duplicate-key', `repeats a key (${where(issue.pos[0])})`);
      else if (issue.code === 'TAG_RESOLVE_FAILED') report('skill.frontmatter-invalid-yaml', `uses an explicit tag (${where(issue.pos[0])})`);
      else report('skill.frontmatter-invalid-yaml', `is not valid YAML: ${issue.code} (${where(issue.pos[0])})`);
    }
    return { data: undefined, body, problems };
  }

  const contents = doc.contents as YamlNode | null;
  if (!isMap(contents)) {
    const what = contents === null ? 'empty' : isSeq(contents) ? 'a list' : 'a scalar';
    report('skill.frontmatter-not-mapping', `is ${what}, not a mapping of fields`);
    return { data: undefined, body, problems };
  }
  let js: unknown;
  try {
    js = doc.toJS({ mapAsMap: true, maxAliasCount: MAX_ALIAS_COUNT });
  } catch {
    report('skill.frontmatter-invalid-yaml', `uses more than ${MAX_ALIAS_COUNT} aliases`);
    return { data: undefined, body, problems };
  }
  const keys = { duplicate: false, collection: false };
  const data = toPlain(js, keys);
  if (keys.collection) report('skill.frontmatter-invalid-yaml', 'has a list or map as a key');
  if (keys.duplicate) report('skill.frontmatter-duplicate-key', 'repeats a key once keys are read as strings (e.g. 1 and "1")');
  if (keys.duplicate || keys.collection || !isPlainObject(data)) return { data: undefined, body, problems };
  return { data, body, problems };
}

interface Line {
  start: number;
  /** Index of the next line (past "\n"), or the text's length on the last line. */
  next: number;
  /** The line without its "\n" or "\r\n". */
  content: string;
}

function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  while (start <= text.length) {
    const nl = text.indexOf('\n', start);
    const next = nl === -1 ? text.length : nl + 1;
    let end = nl === -1 ? text.length : nl;
    if (nl > start && text[nl - 1] === '\r') end = nl - 1;
    lines.push({ start, next, content: text.slice(start, end) });
    if (nl === -1) break;
    start = next;
  }
  return lines;
}

// Maps become plain objects (keys read as strings, the way JSON and every skill reader sees them),
// defined with defineProperty so a `__proto__` key stays data.
function toPlain(value: unknown, keys: { duplicate: boolean; collection: boolean }): unknown {
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value) {
      if (k !== null && typeof k === 'object') keys.collection = true;
      const key = String(k);
      if (Object.hasOwn(out, key)) keys.duplicate = true;
      Object.defineProperty(out, key, { value: toPlain(v, keys), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  if (Array.isArray(value)) return value.map((v) => toPlain(v, keys));
  return value;
}

