/** A configuration file or object that cannot describe a plugin: names the file and the key. */
export class PluginConfigError extends Error {
  override name = 'PluginConfigError';
  readonly code = 'PLUGIN_CONFIG_INVALID';
  constructor(
    readonly file: string,
    readonly key: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${key ? `${key} ` : ''}${reason}`, options);
  }
}
