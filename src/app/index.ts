/**
 * Wires one process from its configuration: the only folder that knows every other one.
 * ROLES (default all) chooses what runs, one module per role under roles/ (start(ctx) → stop);
 * the embedded defaults start a nats-server and PGlite under DATA_DIR when NATS_URL /
 * DATABASE_URL are unset.
 *
 * Guarantees: roles start in a fixed order and stop in the reverse one within a deadline,
 * then the shared resources close (bus, database, embedded servers last), so the embedded
 * nats-server stops after the service has drained; a failed start undoes what had started.
 */
export { startApp } from './run.js';
export { createLlm } from './llm-stack.js';
export { internalRpcTokenOf } from './secrets.js';
export { startupBanner } from './banner.js';
export { VERSION } from './version.js';
export type { App, AppContext, RoleStart, RoleStop } from './types.js';
