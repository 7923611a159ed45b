/**
 * Configuration: every variable is parsed and validated once, here, into one typed,
 * frozen object. Modules receive the slice they need; no other module reads process.env.
 *
 * Flow: defaults (declared beside each field) -> parse each variable (env.ts) -> validate ->
 * runtime form (load.ts). A bad value fails start-up with the exact variable name and reason
 * (ConfigError).
 */
export { ConfigError } from './errors.js';
export { loadConfig, ROLES, type Config, type Role } from './load.js';
export { channelsConfig, type ChannelsConfig } from './channels.js';
export { SWARM_DEFAULTS, approvalPolicies, featureWarnings, loadFeatures, swarmLimits } from './features.js';
export type { ApprovalPolicies, Features, SwarmLimits } from './features.js';
export { TOOL_SOURCE_NAME, toolSourcesConfig } from './tool-sources.js';
export type { McpServerDef, ToolSourcesConfig } from './tool-sources.js';
