import type { FindingCodeInfo } from '../findings.js';

/** Findings about the root package.json the OpenCode and Pi runtimes write. */
export const RUNTIME_FINDING_CODES = Object.freeze({
  'runtime.file-path-invalid': {
    rule: 'AR9O5',
    severity: 'error',
    text:
      'A path listed for package.json "files" must be relative, "/"-separated, with no empty, "." or ".." segment, ' +
      'backslash, NUL or drive letter (§4.1). It is left out of "files".',
  },
  'runtime.pi-skills-dir-invalid': {
    rule: 'AR9O5',
    severity: 'error',
    text:
      '[plugin.pi] skills_dir must be a folder inside the package: relative, "/"-separated, with no ".." segment (§4.1). ' +
      'The default .pi/skills is written instead.',
  },
  'runtime.package-json-unreadable': {
    rule: 'AR9O5',
    severity: 'error',
    text:
      'With [plugin.pi] package_json = "merge" the existing package.json must be UTF-8 JSON holding an object. Nothing can ' +
      'be merged into anything else, so the file is left exactly as it is.',
  },
} as const satisfies Record<string, FindingCodeInfo>);
