import { lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { PLUGIN_CONFIG_SCHEMA_ID, pluginNameProblem } from '@agentproto/agent-plugins';

/** Where the configuration reference lives; the generated plugin.toml links to it. */
const CONFIGURATION_REFERENCE =
  'https://github.com/agentproto/agentproto-sdk/blob/main/packages/agent-plugins/CONFIGURATION.md';

/** The plugin name used when the folder's own name is not a valid plugin name. */
const FALLBACK_NAME = 'my-plugin';

/** The example skill's name (its folder under `skills/`). */
const SKILL_NAME = 'hello';

type InitErrorCode = 'CLI_INIT_NOT_EMPTY' | 'CLI_INIT_LINK';

/**
 * `plugin init` refused its folder: it exists and holds something (`CLI_INIT_NOT_EMPTY`), or it
 * is a symbolic link, or something planted a link or file where init writes (`CLI_INIT_LINK`).
 * Nothing outside the folder was written.
 */
export class CliInitError extends Error {
  override readonly name = 'CliInitError';
  readonly code: InitErrorCode;
  /** The folder (or the file in it) refused, absolute. */
  readonly path: string;
  constructor(code: InitErrorCode, path: string, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.path = path;
  }
}

export interface InitResult {
  /** The folder written into, absolute. */
  dir: string;
  /** The files written, relative to `dir`, with `/` separators, in the order written. */
  files: string[];
}

/**
 * Writes a new plugin project into `dir` (created when absent): a commented `plugin.toml`
 * that shows every common key (optional ones commented out) and one example skill,
 * `skills/hello/SKILL.md`. The two build and validate with no finding of any severity.
 *
 * The plugin is named after the folder when the folder's name is a valid plugin name
 * (`acme.tools`, `review-kit`), else `my-plugin`. A folder that exists and is not empty is
 * refused (`CLI_INIT_NOT_EMPTY`), and so is a folder that is a symbolic link (`CLI_INIT_LINK`):
 * init never writes through a link. Every file is created exclusively, so a link planted
 * while init runs is refused, never followed.
 *
 * @example
 * const { dir, files } = await initPlugin('acme.tools');
 * // files: ['plugin.toml', 'skills/hello/SKILL.md']
 * @throws CliInitError `CLI_INIT_NOT_EMPTY` or `CLI_INIT_LINK`, naming the path.
 */
export async function initPlugin(dir: string): Promise<InitResult> {
  const root = resolve(dir);
  const info = await lstat(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (info?.isSymbolicLink())
    throw new CliInitError(
      'CLI_INIT_LINK',
      root,
      `${root} is a symbolic link; plugin init writes only into a real folder`,
    );
  if (info === undefined) await mkdir(root, { recursive: true });
  else if (!info.isDirectory())
    throw new CliInitError('CLI_INIT_NOT_EMPTY', root, `${root} is a file, expected a folder`);
  else if ((await readdir(root)).length > 0)
    throw new CliInitError(
      'CLI_INIT_NOT_EMPTY',
      root,
      `${root} is not empty; plugin init writes only into a new or empty folder`,
    );

  const folderName = basename(root);
  const name = pluginNameProblem(folderName) === undefined ? folderName : FALLBACK_NAME;
  const files: string[] = [];
  const write = async (path: string, text: string): Promise<void> => {
    const target = join(root, ...path.split('/'));
    // `wx`: never follow or replace whatever appeared at this path since the folder was checked.
    await writeFile(target, text, { flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST')
        throw new CliInitError(
          'CLI_INIT_LINK',
          target,
          `${target} appeared while plugin init ran; nothing was written over it`,
          {
            cause: error,
          },
        );
      throw error;
    });
    files.push(path);
  };
  const makeFolder = async (path: string): Promise<void> => {
    const target = join(root, ...path.split('/'));
    await mkdir(target).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST')
        throw new CliInitError(
          'CLI_INIT_LINK',
          target,
          `${target} appeared while plugin init ran; nothing was written into it`,
          {
            cause: error,
          },
        );
      throw error;
    });
  };
  await write('plugin.toml', pluginToml(name));
  await makeFolder('skills');
  await makeFolder(`skills/${SKILL_NAME}`);
  await write(`skills/${SKILL_NAME}/SKILL.md`, SKILL_MD);
  return { dir: root, files };
}

function pluginToml(name: string): string {
  return `#:schema ${PLUGIN_CONFIG_SCHEMA_ID}
# The plugin's configuration: \`agentproto plugin build\` reads it, \`agentproto plugin validate\`
# checks what it builds. Every key, with examples: ${CONFIGURATION_REFERENCE}
# Keys may be written in snake_case (as here) or camelCase; lines starting with # are optional.

[plugin]
# Lowercase letters, digits, "." and "-"; a reverse-domain name such as "acme.tools" is usual.
name = "${name}"
version = "0.1.0"
# Or take the version from your project: version_from = "package.json" (or pyproject.toml, Cargo.toml)
description = "What the plugin gives an agent, in one sentence."
license = "Apache-2.0"
keywords = ["example"]
# homepage = "https://example.com/${name}"
# repository = "https://github.com/you/${name}"

# The Agent Plugins version to write: "1.0.0" (published, the default) or "1.1.0" (draft).
# spec = "1.1.0"

# Where skills and included files are read from, relative to this file (default: this folder).
# content_root = "."
# The folder of skills, each skills/<name>/SKILL.md (default: "skills").
# skills = "skills"
# Extra files to ship, as globs inside the content root (scripts, binaries of MCP servers).
# include = ["bin/**"]
# Folders copied into every skill (references, templates).
# shared_resources = ["shared/templates"]
# A provenance header in SKILL.md and other files that take a comment (default: true).
# provenance_headers = false
# Runtimes to generate for: "agent-plugins" (always), "opencode", "pi".
# runtimes = ["agent-plugins"]

# [plugin.author]
# name = "Your Name"
# email = "you@example.com"

# An MCP server the client runs (stdio). \${PLUGIN_ROOT} is the installed plugin's folder.
# [[plugin.mcp]]
# name = "example-local"
# command = "./bin/server"
# args = ["--root", "\${PLUGIN_ROOT}"]
# env = { LOG_LEVEL = "warn" }

# An MCP server the client reaches over HTTP ("sse" for the older transport). Never put a
# credential here: Authorization and Cookie headers are refused.
# [[plugin.mcp]]
# name = "example-remote"
# transport = "http"
# url = "https://mcp.example.com/mcp"
# headers = { X-Client = "${name}" }
`;
}

const SKILL_MD = `---
name: ${SKILL_NAME}
description: Greets the user by name and says what this plugin can do. Use when the user says hello or asks what the plugin offers.
---

# Hello

When the user greets you or asks what this plugin does:

1. Greet them by name if you know it.
2. List the skills this plugin ships, one line each.

Replace this skill with your own: each skill is a folder under \`skills/\` holding a
\`SKILL.md\` whose \`name\` matches the folder.
`;
