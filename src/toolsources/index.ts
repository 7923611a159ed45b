/**
 * Tools that come from elsewhere: the MCP servers the operator lists in config/mcp.yaml and
 * the ones users register, and OpenAPI-described APIs users register. Each source's tools
 * become ordinary `Tool`s (`mcp.<server>.<tool>`, `openapi.<name>.<operationId>`) that the
 * tool registry validates, limits, times and records like the built-in ones.
 */
export { MCP_RECONNECT_BACKOFF, McpConnection } from './mcp-connection.js';
export type { McpConnectionOptions, McpToolInfo } from './mcp-connection.js';
export { mcpTools } from './mcp-tool.js';
export type { McpToolCaller } from './mcp-tool.js';
export { ToolSourceStore } from './store.js';
export type { SourceKind, SourceOwner, StoredSource } from './store.js';
export { ToolSources, ownerKey } from './sources.js';
export type { SourceChanges, ToolSourcesDeps } from './sources.js';
export { SourceRegistration } from './registration.js';
export type { McpServerRegistration, OpenApiRegistration, RegistrationDeps, SourceInfo } from './registration.js';
export { OPERATION_ID_RE, loadOpenApiDocument, openApiOperations } from './openapi-doc.js';
export type { LoadOpenApiOptions, LoadedOpenApiDocument, OpenApiOperation, OpenApiParam, ParamLocation } from './openapi-doc.js';
export { openApiTools } from './openapi-tool.js';
export type { OpenApiSource, OpenApiToolOptions } from './openapi-tool.js';
