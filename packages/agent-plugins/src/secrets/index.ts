export { SECRET_FINDING_CODES, type SecretFindingCode } from './codes.js';
export { type SecretContext, type SecretField, type SecretMatch, detectSecret, isCredentialName } from './detect.js';
export { SECRET_RULES, type SecretRule } from './rules.js';
export { type ScannedServer, type SecretScanOptions, scanServerSecrets } from './scan.js';
