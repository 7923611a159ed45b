/**
 * The kernel: what every folder may import, and the only file of kernel/ they import.
 * Errors (one base, one code to HTTP status table), logging, ids, identity, and the task
 * enums and role presets. Imports nothing else from src/ except the generated protobuf enums (proto-enums.ts).
 */
export * from './errors.js';
export * from './log.js';
export * from './ids.js';
export * from './identity.js';
export * from './tasks.js';
export * from './proto-enums.js';
export * from './roles.js';
export * from './secret-file.js';
export * from './backoff.js';
