import type { FindingCodeInfo } from '../findings.js';

/**
 * The finding code of what a package's build record says was left out. A build writes what a
 * client can load and leaves out whatever breaks a rule; without this record the package
 * itself would look complete, and `validate --strict` and `verify` would pass a package with
 * a configured server or skill missing.
 */
export const BUILD_FINDING_CODES = Object.freeze({
  'package.build-omitted': {
    rule: 'AR9O4',
    severity: 'error',
    text:
      'The build of this package left out something its configuration asks for (a server, a skill, a field), and recorded ' +
      'it under "omitted" in .agentproto-generated.json. The package loads without it. Fix the finding the code names and ' +
      'build again; a package built with nothing left out has no such record.',
  },
} as const satisfies Record<string, FindingCodeInfo>);
