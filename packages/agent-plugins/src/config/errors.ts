/** A configuration file or object that cannot describe a plugin: names the file and the key. */
export class PluginConfigError extends Error {
  override name = 'PluginConfigError';
  /** Stable: branch on it. */
  readonly code = 'PLUGIN_CONFIG_INVALID';
  constructor(
    /** The configuration file (absolute), or `plugin config` for an object built in code. */
    readonly file: string,
    /** The key at fault, camelCase, with indexes (`mcp[0].transport`); empty for the whole document. */
    readonly key: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${key ? `${key} ` : ''}${reason}`, options);
  }
}

/**
 * The configuration's content root leaves the folder the configuration file is in (as
 * written, or once links are resolved). Nothing was read from it. A host that means it
 * passes `allowContentRootOutside` to loadPluginConfig; a configuration file cannot.
 */
export class PluginContentRootError extends Error {
  override name = 'PluginContentRootError';
  readonly code = 'PLUGIN_CONTENT_ROOT_OUTSIDE';
  constructor(
    readonly file: string,
    readonly configDir: string,
    readonly contentRoot: string,
    readonly how: 'as written' | 'once links are resolved',
  ) {
    super(
      `${file}: contentRoot ${contentRoot} is outside the configuration's folder ${configDir} (${how}); nothing was read from it`,
    );
  }
}
