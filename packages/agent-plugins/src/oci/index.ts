export {
  MAX_CONFIG_BYTES,
  PLUGIN_ARTIFACT_TYPE,
  PLUGIN_CONFIG_TYPE,
  PLUGIN_LAYER_TYPE,
  type PluginArtifactConfig,
} from './artifact.js';
export {
  PluginArtifactError,
  PluginDestinationError,
  PluginEntryUnsupportedError,
  PluginLayerUnsafeError,
  PluginNotFoundError,
  PluginOciError,
  type PluginOciErrorCode,
  PluginPackageInvalidError,
  type PluginSizePart,
  PluginTooLargeError,
} from './errors.js';
export type { PluginRegistryOptions } from './repository.js';
export { type PushPluginOptions, type PushedPlugin, pushPlugin } from './push.js';
export { DEFAULT_PULL_LIMITS, type PullLimits, type PullPluginOptions, type PulledPlugin, pullPlugin } from './pull.js';
