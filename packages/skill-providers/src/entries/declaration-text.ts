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
 * the message names the source and a line, never the text.
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
  return parseSkillDeclaration(value);
}
