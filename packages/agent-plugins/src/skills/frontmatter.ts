import {
  DocumentTooComplexError,
  DocumentTooDeepError,
  DocumentTooLargeError,
  FRONTMATTER_LIMITS,
  LineCounter,
  findFrontmatter,
  isMap,
  isSeq,
  parseYamlDocument,
  yamlDocumentValue,
} from '@agentproto/documents';
import { type Finding, findingFrom } from '../findings.js';
import { SKILL_FINDING_CODES, type SkillFindingCode } from './codes.js';
import { isRecord } from '../values.js';

export interface Frontmatter {
  /** The frontmatter mapping, or undefined when the file has none that parses to a mapping. */
  data: Record<string, unknown> | undefined;
  /** The Markdown after the closing "---" line, as written (line endings kept). */
  body: string;
  /** Problems with the file and its frontmatter, at `<file>#/frontmatter`. Messages never quote a value. */
  problems: Finding[];
}

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
 * | over 32 KiB (the closing line further)  | skill.frontmatter-too-large, nothing parsed                            |
 * | nested more than 64 deep                | skill.frontmatter-too-deep, found on the lexer's tokens before the parser builds anything |
 * | aliases expanded past 100 uses or 100,000 values | skill.frontmatter-too-complex                                  |
 *
 * `__proto__` is read as an ordinary key, never as the object's prototype. YAML error messages are
 * not passed on: they quote the source line, which may hold a secret; only the line and column are.
 * The limits are what keeps a hostile SKILL.md (a 589-byte upload held 400,000 `[`) from
 * exhausting the heap of the process that validates it: such a file ends in a finding.
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

  const block = findFrontmatter(text, FRONTMATTER_LIMITS.maxBytes);
  if (block.found === 'missing') {
    report('skill.frontmatter-missing', 'the first line must be "---"');
    return { data: undefined, body: text, problems };
  }
  if (block.found === 'unterminated') {
    report('skill.frontmatter-unterminated', 'has no closing "---" line');
    return { data: undefined, body: '', problems };
  }
  if (block.found === 'too-large') {
    report(
      'skill.frontmatter-too-large',
      `is over the ${block.limit}-byte limit for frontmatter; nothing of it is parsed`,
    );
    return { data: undefined, body: '', problems };
  }
  const body = block.body;
  const source = `${file}#/frontmatter`;

  const lineCounter = new LineCounter();
  const where = (line: number | undefined, column: number | undefined) =>
    // +1: the opening "---" is the file's first line.
    line === undefined ? '' : ` (line ${line + 1}${column === undefined ? '' : `, column ${column}`})`;
  const limitProblem = (error: unknown): boolean => {
    if (error instanceof DocumentTooLargeError)
      report(
        'skill.frontmatter-too-large',
        `is over the ${error.limit}-byte limit for frontmatter; nothing of it is parsed`,
      );
    else if (error instanceof DocumentTooDeepError)
      report(
        'skill.frontmatter-too-deep',
        `nests lists or maps more than ${error.limit} deep${where(error.line, error.column)}`,
      );
    else if (error instanceof DocumentTooComplexError) {
      report(
        'skill.frontmatter-too-complex',
        error.measure === 'aliases'
          ? `expands aliases more than ${error.limit} times`
          : `holds more than ${error.limit} values once aliases are expanded`,
      );
    } else return false;
    return true;
  };
  let doc: ReturnType<typeof parseYamlDocument>;
  try {
    // Bounded in size and nesting before the parser runs, with the one parser configuration
    // every untrusted YAML document gets (see @agentproto/content-cache parseYamlDocument).
    doc = parseYamlDocument(block.yaml, { source, limits: FRONTMATTER_LIMITS, lineCounter });
  } catch (error) {
    if (limitProblem(error)) return { data: undefined, body, problems };
    throw error;
  }
  const at = (offset: number | undefined) => {
    const pos = lineCounter.linePos(offset ?? 0);
    return where(pos.line, pos.col);
  };
  const yamlIssues = [...doc.errors, ...doc.warnings];
  if (yamlIssues.length > 0) {
    for (const issue of yamlIssues) {
      if (issue.code === 'DUPLICATE_KEY')
        report(
          'skill.frontmatter-duplicate-key',
          `repeats a key, keys read as strings (e.g. 1 and "1")${at(issue.pos[0])}`,
        );
      else if (issue.code === 'TAG_RESOLVE_FAILED')
        report('skill.frontmatter-invalid-yaml', `uses an explicit tag${at(issue.pos[0])}`);
      else if (issue.code === 'NON_STRING_KEY')
        report('skill.frontmatter-invalid-yaml', `has a list or map as a key${at(issue.pos[0])}`);
      else report('skill.frontmatter-invalid-yaml', `is not valid YAML: ${issue.code}${at(issue.pos[0])}`);
    }
    return { data: undefined, body, problems };
  }

  const contents = doc.contents;
  if (!isMap(contents)) {
    const what = contents === null ? 'empty' : isSeq(contents) ? 'a list' : 'a scalar';
    report('skill.frontmatter-not-mapping', `is ${what}, not a mapping of fields`);
    return { data: undefined, body, problems };
  }
  let data: unknown;
  try {
    data = yamlDocumentValue(doc, source, FRONTMATTER_LIMITS);
  } catch (error) {
    if (limitProblem(error)) return { data: undefined, body, problems };
    throw error;
  }
  if (!isRecord(data)) return { data: undefined, body, problems };
  return { data, body, problems };
}
