/**
 * The kernel: what every folder may import, and the only file of kernel/ they import.
 * Errors (one base, one code to HTTP status table), logging, ids, identity, and the task
 * enums and role presets. Imports nothing else from src/ except the generated protobuf enums (proto-enums.ts).
 */
export { AppError, Code, badRequest, conflict, forbidden, httpStatusOf, notFound, toAppError, toConnectError, unauthenticated, unavailable } from './errors.js';
export { createLogger, formatPretty, parseTraceparent, resolveLogFormat } from './log.js';
export type { LogFormat, Logger } from './log.js';
export { UUID_RE, isUuid } from './ids.js';
export { ANONYMOUS, ANONYMOUS_CALLER, CALLER, SYSTEM_CALLER, callAs, callerOfPrincipal } from './identity.js';
export type { Principal, RpcCaller } from './identity.js';
export { EXECUTION_MODE, EXECUTION_MODES, MODES, MODE_BY_EXECUTION, TASK_STATUSES, TERMINAL_STATUSES, TIERS, isTier } from './tasks.js';
export type { ExecutionModeName, Mode, TaskStatusName, TerminalStatus, Tier } from './tasks.js';
export {
  EXECUTION_MODE_NAME,
  MODEL_TIER_BY_NAME,
  MODE_BY_ENUM,
  TASK_STATUS_NAME,
  TIER_BY_ENUM,
  executionModeFromName,
  taskStatusFromName,
} from './proto-enums.js';
export { DEFAULT_ROLE, ROLE_NAMES, rolePreset, roleTools } from './roles.js';
export type { RolePreset } from './roles.js';
export { secretFileIn } from './secret-file.js';
export { backoffDelay } from './backoff.js';
export type { Backoff } from './backoff.js';
export { lazyImport } from './lazy.js';
export { MAX_VERSION_LENGTH, compareVersions, isPrerelease, isVersion, latestVersion } from './version.js';
export { timedCheck } from './checks.js';
export type { CheckResult } from './checks.js';
