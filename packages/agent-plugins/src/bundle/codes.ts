import type { FindingCodeInfo } from '../findings.js';

/** Findings about bundled files: `include` globs and shared resources. */
export const BUNDLE_FINDING_CODES = {
  'bundle.glob-escapes': {
    rule: 'AR9O5',
    severity: 'error',
    text:
      'An include glob must stay inside the content root: an absolute glob, a drive letter or a ".." segment is refused ' +
      'when the configuration is loaded (§4.1: every path of a package resolves inside the plugin root).',
  },
  'bundle.glob-empty': {
    rule: 'AR9O4',
    severity: 'warning',
    text: 'An include glob matched no file: nothing was bundled for it.',
  },
  'bundle.shared-clash': {
    rule: 'AR9O5',
    severity: 'error',
    text:
      'A shared resource would be copied over a file the skill already has. Nothing is overwritten: rename one of them ' +
      '(sharedResources copies the folder into every skill at skills/<name>/<folder>/).',
  },
} as const satisfies Record<string, FindingCodeInfo>;
