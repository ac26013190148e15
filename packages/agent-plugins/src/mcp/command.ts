/**
 * What a stdio `command` is, read the way §7.2.1 defines it: "a single executable token, not a
 * shell command string … either a bare executable name or a plugin-relative path beginning
 * with `./`". A client resolves a bare name with the platform's executable search and a `./`
 * path against the plugin root, and never splits the value or hands it to a shell. So "one
 * token" is not a character class: `./bin/probe token.sh` and `./my(1).sh` are single tokens
 * (the official conformance case mcp.stdio.command.single-token launches the first).
 *
 * | Command                                   | Form    | One token when                                  |
 * |-------------------------------------------|---------|-------------------------------------------------|
 * | `npx`, `my(1).sh`                         | bare    | it holds no whitespace, control or shell operator |
 * | `./bin/server`, `./bin/probe token.sh`    | path    | the package has a file at that path              |
 * | `./bin/server --stdio` (no such file)     | path    | never: a command line written as one string      |
 * | `/usr/bin/x`, `../x`, `./a/../x`          | escapes | never (§4.1)                                     |
 * | `bin/x`, `~/x`, `${PLUGIN_ROOT}/x`, `.\x` | invalid | never                                            |
 *
 * Pure; nothing here touches a file system. Whether a `./` path exists is the caller's to
 * say (the files a build packages, or the package a reader opened).
 */

/** The form of a stdio command, or why it has none. */
export type CommandForm =
  | { kind: 'bare' }
  /** `path` is package-relative: the command without its leading "./". */
  | { kind: 'path'; path: string }
  | { kind: 'escapes'; reason: string }
  | { kind: 'invalid'; reason: string };

// Whitespace separates the words of a command line; the others are operators only a shell
// acts on. A bare name is found through PATH, which no check here can see, so its characters
// are the only evidence that it was written as a shell line. Parentheses are not in the list:
// `my(1).sh` is an ordinary file name and a client that never uses a shell runs it as it is.
const COMMAND_LINE = /[\s;&|<>$`'"*?]/u;
const CONTROL = /\p{Cc}/u;

/** Whether `command` reads like a shell command line (whitespace, or a shell operator) rather than a name. */
function looksLikeCommandLine(command: string): boolean {
  return COMMAND_LINE.test(command);
}

function isAbsolute(path: string): boolean {
  return path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path);
}

/**
 * The form of `command` (§4.1, §7.2.1, §9.2). A `./` path is accepted here whatever its
 * characters, short of control characters and backslashes; whether it is one token is
 * decided by whether the package has that file (bundledCommandProblem).
 */
export function commandForm(command: string): CommandForm {
  if (isAbsolute(command))
    return {
      kind: 'escapes',
      reason: 'is an absolute path; a bundled executable must be a "./" path inside the plugin',
    };
  if (
    command === '..' ||
    command.startsWith('../') ||
    command.startsWith('..\\') ||
    (command.startsWith('./') && command.split('/').includes('..'))
  ) {
    return { kind: 'escapes', reason: 'holds a ".." segment and may resolve outside the plugin root' };
  }
  if (command.includes('${'))
    return {
      kind: 'invalid',
      reason: 'holds a ${…} placeholder, but command is never expanded; use a bare name or a "./" path',
    };
  // A backslash is a separator on Windows and a name character elsewhere: the same value
  // would name two different files. A control character is no part of any usable name.
  if (command === '' || CONTROL.test(command) || command.includes('\\')) {
    return { kind: 'invalid', reason: 'must be one executable token, without control characters or backslashes' };
  }
  if (command.startsWith('./')) {
    const path = command.slice(2);
    if (path.split('/').some((s) => s === '' || s === '.'))
      return { kind: 'invalid', reason: 'must be a plain "./" path to a file, with no empty or "." segment' };
    return { kind: 'path', path };
  }
  // A leading "~" is a home directory only to a shell; no client expands it.
  if (command.startsWith('~'))
    return { kind: 'invalid', reason: 'starts with "~", which only a shell expands; use a bare name or a "./" path' };
  if (command.includes('/') || command === '.')
    return { kind: 'invalid', reason: 'is a path that does not start with "./"; use a bare name or a "./" path' };
  if (looksLikeCommandLine(command)) {
    return {
      kind: 'invalid',
      reason:
        'is a bare name holding whitespace or a shell operator: a command line, not one token; a client never splits it, so put the arguments in args',
    };
  }
  return { kind: 'bare' };
}

/**
 * Why a `./` command whose path names no regular file in the package is not acceptable, as
 * `{ invalid }` when it is no single token at all, or `{ missing }` when it is one but the
 * file is absent. A path holding whitespace or a shell operator that names no file is a
 * command line written as one string (`./bin/server --stdio`): a client would look for a
 * file of that whole name, and the entry breaks "a single executable token, not a shell
 * command string" (§7.2.1). Without them it is a token that names nothing, and the server
 * fails to start (§7.2.2 item 5).
 */
export function unbundledCommand(
  command: string,
  what: 'absent' | 'not-a-file',
): { invalid: string } | { missing: string } {
  const names = what === 'absent' ? 'names no file in the package' : 'names something other than a regular file';
  if (looksLikeCommandLine(command)) {
    return {
      invalid: `${names} and holds whitespace or a shell operator: a command line, not one token; a client runs the whole value as one path and never splits it, so put the arguments in args`,
    };
  }
  return { missing: names };
}
