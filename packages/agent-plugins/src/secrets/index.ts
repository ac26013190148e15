export { SECRET_FINDING_CODES, type SecretFindingCode } from './codes.js';
export { type SecretContext, type SecretField, type SecretMatch, detectSecret, isCredentialName } from './detect.js';
export { SECRET_RULES, type SecretRule } from './rules.js';
export {
  type ManifestSecret,
  type ScannedServer,
  type SecretScanOptions,
  scanManifestSecrets,
  scanServerSecrets,
} from './scan.js';
