import { DocumentError, parseUntrustedJson, parseUntrustedYaml } from '@agentproto/documents';
import type { SkillSource } from '../provider.js';
import { parseSkillDeclaration } from './entry.js';
import { SkillDeclarationInvalidError } from './errors.js';

export interface SkillDeclarationTextOptions {
  /** Names the declaration in errors: a file path, a request field. */
  source: string;
  /** `json` parses JSON only; `yaml` (the default) also reads JSON, as YAML 1.2 does. */
  format?: 'yaml' | 'json';
}

/**
 * A declaration from its text (a skills.yaml, a JSON body): parsed under the shared rules for
 * documents from strangers (at most 128 KiB, 64 levels, 100,000 values, 100 alias uses; the
 * document is measured before the parser builds anything), then checked by
 * parseSkillDeclaration. A document that breaks those rules or is not valid is a
 * SkillDeclarationInvalidError whose cause is the DocumentError (its `code` says which rule);
 * the message names the source and a line, never the text. The document is the array of
 * entries or `{ skills: [...] }` (optionally with `$schema`): the two forms of
 * schemas/skills/1/skills.schema.json.
 */
export function parseSkillDeclarationText(
  input: string | Uint8Array,
  options: SkillDeclarationTextOptions,
): SkillSource[] {
  let value: unknown;
  try {
    value =
      options.format === 'json'
        ? parseUntrustedJson(input, { source: options.source })
        : parseUntrustedYaml(input, { source: options.source });
  } catch (error) {
    if (!(error instanceof DocumentError)) throw error;
    throw new SkillDeclarationInvalidError(
      error.detail,
      { index: undefined, entry: `(${options.source})` },
      { cause: error },
    );
  }
  return parseSkillDeclaration(entriesOfDocument(value, options.source));
}

/**
 * The entries of a declaration document: the array itself, or the `skills` of
 * `{ skills: [...] }` (with an optional `$schema`, for editors), the schema's two forms.
 */
function entriesOfDocument(value: unknown, source: string): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !('skills' in value)) return value;
  const extra = Object.keys(value).find((key) => key !== 'skills' && key !== '$schema');
  if (extra !== undefined) {
    throw new SkillDeclarationInvalidError(
      `has an unknown key ${JSON.stringify(extra.slice(0, 40))}; a declaration document holds "skills" and "$schema"`,
      { index: undefined, entry: `(${source})` },
    );
  }
  const schema = (value as { $schema?: unknown }).$schema;
  if (schema !== undefined && typeof schema !== 'string') {
    throw new SkillDeclarationInvalidError('"$schema" must be a string', { index: undefined, entry: `(${source})` });
  }
  return (value as { skills: unknown }).skills;
}
