export { PluginConfigError, PluginContentRootError } from './errors.js';
export {
  type LoadedPluginConfig,
  type LoadPluginConfigOptions,
  loadPluginConfig,
  normalizePluginConfig,
} from './load.js';
export { PLUGIN_CONFIG_SCHEMA, PLUGIN_CONFIG_SCHEMA_ID } from './schema-file.js';
export type { AuthorConfig, McpServerConfig, PluginConfig } from './types.js';
