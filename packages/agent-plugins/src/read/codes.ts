import type { FindingCodeInfo } from '../findings.js';

// Severity here is the widest case. The reader reports a failure with the severity of its
// failure boundary (FAILURE_BOUNDARIES): an error when the plugin or a component is disabled,
// a warning when only the one path is denied and everything else still loads (§4.1).
const SCOPED =
  'What is disabled follows the narrowest failure boundary of §4.1: the plugin, a component type, one skill or server, or only this path.';

/**
 * The AR9O5 finding codes of reading a package: one per way a package path can fail to be
 * read as a conformant client reads it (§4.1).
 */
export const READ_FINDING_CODES = Object.freeze({
  'read.path-invalid': {
    rule: 'AR9O5',
    severity: 'error',
    text: `A package path is relative, "/"-separated and holds no ".." segment, backslash or NUL; any other path is refused (§4.1). ${SCOPED}`,
  },
  'read.outside-root': {
    rule: 'AR9O5',
    severity: 'error',
    text: `The path, or a link on the way to it, resolves outside the filesystem-resolved plugin root (§4.1). ${SCOPED}`,
  },
  'read.link-loop': {
    rule: 'AR9O5',
    severity: 'error',
    text: `A link on the way to the path leads back to itself, so the path resolves to nothing (§4.1). ${SCOPED}`,
  },
  'read.too-many-links': {
    rule: 'AR9O5',
    severity: 'error',
    text: `Resolving the path follows more than 40 links in total, the limit an operating system applies (§4.1). ${SCOPED}`,
  },
  'read.link-dangling': {
    rule: 'AR9O5',
    severity: 'error',
    text: `A link on the way to the path points at nothing (§4.1). ${SCOPED}`,
  },
  'read.not-regular-file': {
    rule: 'AR9O5',
    severity: 'error',
    text: `The path resolves to a directory, pipe, socket or device where a regular file is expected; only regular files are read (§6.2, §7.1). ${SCOPED}`,
  },
  'read.not-directory': {
    rule: 'AR9O5',
    severity: 'error',
    text: `The path resolves to something other than a directory where a directory is expected (§6.2). ${SCOPED}`,
  },
  'read.unreadable': {
    rule: 'AR9O5',
    severity: 'error',
    text: `The path cannot be read: permission is denied, the file changed while it was read, or the filesystem failed (§4.1). ${SCOPED}`,
  },
  'read.git-metadata': {
    rule: 'AR9O5',
    severity: 'warning',
    text:
      'The path is, or lies below, a ".git" entry in a spelling git itself refuses (".git", ".GIT", "git~1", ".git.", ".g\u200cit", …): ' +
      "another repository's configuration, whose core.fsmonitor or hooks would run on the next git command there. It is " +
      'never read, imported, pulled or shipped; only this path is denied and everything else still loads.',
  },
  'read.file-too-large': {
    rule: 'AR9O5',
    severity: 'error',
    text: `The file is larger than the per-file limit (10 MiB unless configured); it is refused before it is read. ${SCOPED}`,
  },
  'read.package-too-large': {
    rule: 'AR9O5',
    severity: 'error',
    text:
      'The files read from the package together exceed the per-package limit (256 MiB unless configured). The plugin is ' +
      'rejected as a whole: which files fit under the limit depends on the order they are read in, so no partial load is stable.',
  },
} as const satisfies Record<string, FindingCodeInfo>);

export type ReadFindingCode = keyof typeof READ_FINDING_CODES;
