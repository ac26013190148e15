export { CODE_SCHEMA_ID, CODE_SCHEMA_LEGACY_ID, codeSchemaRef } from './ids.js';
export { codeSchema, codeSchemaLegacy } from './code-schema.js';
export {
  CODE_AJV_OPTIONS,
  addCodeSchemas,
  createCodeValidator,
  checkCode,
  checkRun,
  checkCodeWorkspaceManifest,
} from './validator.js';
export { explainSchemaErrors } from './problems.js';
export { ManifestValidationError } from './errors.js';
