export { PluginConfigError } from './errors.js';
export { type LoadedPluginConfig, loadPluginConfig, normalizePluginConfig } from './load.js';
export type { AuthorConfig, McpServerConfig, PluginConfig } from './types.js';
