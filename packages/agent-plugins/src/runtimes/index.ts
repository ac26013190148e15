export { RUNTIME_FINDING_CODES } from './codes.js';
export {
  DEFAULT_OPENCODE_DEPENDENCY,
  PI_OWNED_KEYS,
  type RuntimePackageInput,
  opencodePackageJson,
  packageJsonDrift,
  piPackageJson,
} from './package-json.js';
