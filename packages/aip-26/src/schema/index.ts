export { CODE_SCHEMA_ID, CODE_SCHEMA_LEGACY_ID, codeSchemaRef } from './ids.js';
export type { CodeSchemaDef } from './ids.js';
export { codeSchema, codeSchemaLegacy, codeSchemas } from './code-schema.js';
export {
  CODE_AJV_OPTIONS,
  addCodeSchemas,
  createCodeValidator,
  checkCode,
  checkRun,
  checkCodeWorkspaceManifest,
} from './validator.js';
export type { CheckOptions } from './validator.js';
export { explainSchemaErrors } from './problems.js';
export type { ExplainOptions } from './problems.js';
export { ManifestValidationError } from './errors.js';
export type { SchemaProblem, CheckResult } from './errors.js';
