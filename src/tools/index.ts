/**
 * Tools: the contract a tool implements, the built-in tools, and the registry that is the one
 * way to run one (schema validation, rate limits shared through NATS KV, time limits, usage
 * records). A tool's failure is a result the model reads, never a crash of its caller; tools
 * that fetch URLs chosen by a model go through the SSRF-guarded client; the calculator and
 * python_executor run in worker threads that their time limits terminate.
 */
export { builtinTools } from './builtin.js';
export type { BuiltinToolDeps, BuiltinToolSettings } from './builtin.js';
export { createGuardedFetch, vetUrl } from './net-fetch.js';
export type { GuardedFetch, GuardedFetchOptions, GuardedRequestInit } from './net-fetch.js';
export type { HostLookup, UrlGuardOptions } from './net-guard.js';
export { ToolRegistry, syntheticTokens } from './registry.js';
export type { ExecuteOptions, RegistryOptions, ToolExecution, ToolInfo } from './registry.js';
export { ToolError } from './tool.js';
export type { Tool, ToolContext, ToolModel, ToolModelRequest, ToolModelResult, ToolOutput, ToolParameters } from './tool.js';
export { ToolUsageStore } from './usage.js';
export type { ToolUsage } from './usage.js';
export { FETCH_DEFAULT_LENGTH as WEB_FETCH_DEFAULT_CHARS } from './web-fetch.js';
export type { WebSearchSettings } from './web-search.js';
