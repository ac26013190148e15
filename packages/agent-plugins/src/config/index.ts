export { PluginConfigError, PluginContentRootError } from './errors.js';
export {
  type LoadedPluginConfig,
  type LoadPluginConfigOptions,
  loadPluginConfig,
  normalizePluginConfig,
} from './load.js';
export type { AuthorConfig, McpServerConfig, PluginConfig } from './types.js';
