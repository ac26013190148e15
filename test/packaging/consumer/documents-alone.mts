// A consumer of @agentproto/documents alone, compiled with no @types/node (tsconfig.documents.json):
// its README says its public types stand on their own. Nothing here may need Node's types either.
import {
  DOCUMENT_LIMITS,
  DocumentError,
  type DocumentErrorCode,
  type JsonParseOptions,
  parseUntrustedJson,
  parseUntrustedToml,
  parseUntrustedYaml,
  readBoundedFile,
} from '@agentproto/documents';

const json: JsonParseOptions = { source: 'plugin.json' };
export const parsed: unknown = parseUntrustedJson('{"name":"review"}', json);
export const yaml: unknown = parseUntrustedYaml('name: review\n', { source: 'plugin.yaml' });
export const toml: unknown = parseUntrustedToml('name = "review"\n', { source: 'plugin.toml' });
export const limit: number = DOCUMENT_LIMITS.maxBytes;
export const read: Promise<Uint8Array> = readBoundedFile('./plugin.yaml', limit, 'yaml');
export const code = (error: unknown): DocumentErrorCode | undefined =>
  error instanceof DocumentError ? error.code : undefined;
// @ts-expect-error: a document is text or bytes
parseUntrustedJson(42, json);
