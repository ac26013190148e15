/** What the product makes of a file in a known namespace folder. */
export type ExtensionKind = 'agent' | 'command' | 'hooks' | 'rule' | 'context';

interface ExtensionFileLayout {
  /**
   * Where the file sits inside the namespace folder: `agents/<name>.md` is one file per name
   * directly in `agents/`; a template without `<name>` is one fixed file.
   */
  template: string;
  kind: ExtensionKind;
  /** True when import turns the file into project content; false when it is reported as having no equivalent. */
  imported: boolean;
}

export interface KnownNamespace {
  /** The files the namespace's client reads from its folder (§8.2); empty when it only has manifest data. */
  files: readonly ExtensionFileLayout[];
  /**
   * Manifest data keys (`extensions.<namespace>.<key>`, §8.1) the product writes and imports.
   * When `sortedData` is set, the namespace's data is written with object keys sorted at every depth.
   */
  data: readonly string[];
  sortedData: boolean;
}

/**
 * The namespaces the product knows, from the seed's "Extensions" and "Field mapping"
 * sections (agent-plugins.md):
 *
 * | Namespace                      | Content                                                  |
 * |--------------------------------|----------------------------------------------------------|
 * | `com.anthropic.claude-code`    | `agents/<name>.md`, `commands/<name>.md`, `hooks/hooks.json` |
 * | `com.openai`                   | the Codex `interface` block (manifest data), keys sorted  |
 * | `io.github.goldziher.ai-rulez` | `rules/<name>.md`, `context/<name>.md`                   |
 * | `com.github.copilot`           | `agents/<name>.agent.md`                                 |
 *
 * Import turns agents, commands, rules and context into project content; hooks/hooks.json has
 * no equivalent and is reported. Any other valid namespace is carried through untouched, as
 * data and as files, since a client ignores the namespaces it does not implement (§8.1).
 *
 * "Keys are written sorted" is applied at every depth of the com.openai data, not only to the
 * top of `interface`: the source table's order is whatever the author typed, and sorting all
 * levels is what makes the written bytes independent of it. Array order is kept (it means
 * something, e.g. the order of default prompts).
 */
export const KNOWN_NAMESPACES: Readonly<Record<string, KnownNamespace>> = Object.freeze({
  'com.anthropic.claude-code': {
    files: [
      { template: 'agents/<name>.md', kind: 'agent', imported: true },
      { template: 'commands/<name>.md', kind: 'command', imported: true },
      { template: 'hooks/hooks.json', kind: 'hooks', imported: false },
    ],
    data: [],
    sortedData: false,
  },
  'com.github.copilot': {
    files: [{ template: 'agents/<name>.agent.md', kind: 'agent', imported: true }],
    data: [],
    sortedData: false,
  },
  'com.openai': {
    files: [],
    data: ['interface'],
    sortedData: true,
  },
  'io.github.goldziher.ai-rulez': {
    files: [
      { template: 'rules/<name>.md', kind: 'rule', imported: true },
      { template: 'context/<name>.md', kind: 'context', imported: true },
    ],
    data: [],
    sortedData: false,
  },
} satisfies Record<string, KnownNamespace>);

/** The known namespace `namespace`, or undefined for one the product carries through untouched. */
export function knownNamespace(namespace: string): KnownNamespace | undefined {
  return Object.hasOwn(KNOWN_NAMESPACES, namespace) ? KNOWN_NAMESPACES[namespace] : undefined;
}

export interface LayoutMatch {
  layout: ExtensionFileLayout;
  /** The `<name>` of the template; undefined for a fixed file. */
  name: string | undefined;
}

/**
 * The layout `path` (relative to the namespace folder) follows, or undefined. `<name>` is one
 * non-empty path segment that does not start with "." (a hidden file is not content a client
 * lists). Each namespace reads its own templates: `agents/x.agent.md` is the Copilot agent `x`
 * but the Claude Code agent `x.agent`.
 */
export function matchLayout(known: KnownNamespace, path: string): LayoutMatch | undefined {
  for (const layout of known.files) {
    const at = layout.template.indexOf('<name>');
    if (at < 0) {
      if (path === layout.template) return { layout, name: undefined };
      continue;
    }
    const prefix = layout.template.slice(0, at);
    const suffix = layout.template.slice(at + '<name>'.length);
    if (!path.startsWith(prefix) || !path.endsWith(suffix) || path.length <= prefix.length + suffix.length) continue;
    const name = path.slice(prefix.length, path.length - suffix.length);
    if (name.includes('/') || name.startsWith('.')) continue;
    return { layout, name };
  }
  return undefined;
}

/**
 * The root files of a package a namespace folder must not shadow. `plugin.json` and
 * `package.json` are valid reverse-domain names, and a folder of that name would replace
 * the manifest (or the OpenCode/Pi package.json).
 */
export const RESERVED_NAMESPACE_FOLDERS: readonly string[] = Object.freeze(['mcp.json', 'package.json', 'plugin.json']);
