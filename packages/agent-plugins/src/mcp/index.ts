export { type McpServerConfig, buildServers } from './build.js';
export { MCP_FINDING_CODES } from './codes.js';
export { readServers } from './read.js';
