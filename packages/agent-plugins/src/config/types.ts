import type { McpServerConfig } from '../mcp/build.js';
import type { SpecVersion } from '../schemas.js';

/** One MCP server as a project configures it (the seed's `[[plugin.mcp]]` / `[[mcp_servers]]`). */
export type { McpServerConfig };

/** Who makes the plugin: plugin.json `author`. */
export interface AuthorConfig {
  /** The author's or team's name. */
  name?: string;
  /** A contact address. */
  email?: string;
  /** The author's web page. */
  url?: string;
}

/**
 * A plugin as a product configures it: the seed's `[plugin]` table, with names in camelCase.
 * Files may spell keys the seed's way (`version_from`, `content_root`, …); both spellings
 * of one key in one file is an error.
 */
export interface PluginConfig {
  /** The plugin's name: `a-z`, `0-9`, `.` and `-`, 1 to 64 characters, no `--` or `..` (`acme.tools`). Required. */
  name: string;
  /** The package's version. */
  version?: string;
  /** A package.json, pyproject.toml or Cargo.toml (relative to the config file) whose version to use. */
  versionFrom?: string;
  /** One sentence about the plugin, shown by clients. */
  description?: string;
  /** The plugin's web page. */
  homepage?: string;
  /** Where the plugin's source lives. */
  repository?: string;
  /** An SPDX license expression (`Apache-2.0`). */
  license?: string;
  /** Words clients may search by. */
  keywords?: string[];
  /** Who makes the plugin. */
  author?: AuthorConfig;
  /** The Agent Plugins version to write; 1.0.0 when unset. */
  spec?: SpecVersion;
  /** 1.1.0 only: what clients show (`displayName`, `icon`, …); left out with a finding for 1.0.0. */
  presentation?: Record<string, unknown>;
  /** Where `include`, `skills` and `sharedResources` are read from, relative to the config file; its folder by default. */
  contentRoot?: string;
  /** Globs of extra files to ship, relative to the content root. */
  include?: string[];
  /** The folder holding `<name>/SKILL.md` skills, relative to the content root; `skills` by default. */
  skills?: string;
  /** Folders copied into every skill (references, templates). */
  sharedResources?: string[];
  /** Write a provenance header into SKILL.md and other comment-safe files; true by default. */
  provenanceHeaders?: boolean;
  /** The MCP servers the package declares in mcp.json; one a client would reject is left out with a finding. */
  mcp?: McpServerConfig[];
  /** Client extension content by reverse-domain namespace. */
  extensions?: Record<string, unknown>;
  /**
   * The runtimes the project generates for (the seed's `runtimes`). This package acts on two:
   * `opencode` and `pi` each add the root package.json (see buildPlugin); `agent-plugins` is
   * the package itself, built whatever the list says. Every other name (`claude`, `codex`,
   * `copilot`, …) belongs to the tool that writes that runtime's files: accepted and ignored,
   * so one configuration serves both tools.
   *
   * `opencode` and `pi` together write one package.json holding both runtimes' keys, which
   * both own in full; `pi.packageJson = "merge"` with `opencode` is refused (PluginConfigError),
   * since OpenCode's file is never partly the project's. (`string & {}` keeps the three known
   * names in editor completion, which a plain `| string` would swallow.)
   */
  runtimes?: Array<'agent-plugins' | 'opencode' | 'pi' | (string & {})>;
  /** OpenCode and Pi: the root package.json's `packageManager`. */
  packageManager?: string;
  /** OpenCode: the `@opencode/plugin` dependency range. */
  opencodeDependency?: string;
  /**
   * Pi only. `skillsDir`: the folder `pi.skills` names, `.pi/skills` by default; any folder
   * other than `skills` gets its own copy of the skills tree, `skills` reuses the tree the
   * package already has. `packageJson`: `own` (the default) writes the whole file, `merge`
   * only the keys in PI_OWNED_KEYS, keeping the project's others.
   */
  pi?: { skillsDir?: string; packageJson?: 'own' | 'merge' };
}
