export { type BuildServersOptions, type McpServerConfig, type McpServers, buildServers } from './build.js';
export { type McpRemoteServer, type McpServer, type McpServerType, type McpStdioServer } from './check.js';
export { MCP_FINDING_CODES, type McpFindingCode } from './codes.js';
export { type McpServersRead, readServers } from './read.js';
