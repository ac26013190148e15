export { RUNTIME_FINDING_CODES, type RuntimeFindingCode } from './codes.js';
export {
  DEFAULT_OPENCODE_DEPENDENCY,
  DEFAULT_PI_SKILLS_DIR,
  OPENCODE_PLUGIN_PACKAGE,
  PACKAGE_JSON,
  PI_OWNED_KEYS,
  type RuntimePackageInput,
  type RuntimePackageJson,
  opencodePackageJson,
  packageJsonDrift,
  piPackageJson,
} from './package-json.js';
