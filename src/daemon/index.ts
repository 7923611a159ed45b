/**
 * Daemon clients (GET /v1/ws/messages, whose socket plumbing is the gateway's): the hub of one
 * gateway's connections (dispatch, claims, replies, the sweeper) and `ClaimBoard`, the
 * claim-once arbitration every gateway process goes through.
 *
 * Guarantees: a dispatched message is claimed by at most one connection at a time, on any
 * gateway; a claim not replied within the claim TTL (this process's DAEMON_CLAIM_TTL_SECONDS,
 * applied to the claims bucket at every start) ends, and the message is offered again; a
 * reply is stored where it goes before its claim ends; a message no daemon claims within the
 * pending-message TTL goes to the `unclaimed` route. No gateway keeps a claim only in memory.
 * Claims and pending messages are read from their bucket's leader (leader-reads.ts), so a
 * holder replying right after its grant finds its claim on a replicated bucket too.
 */
export { ClaimBoard, type ClaimMeta } from './claims.js';
export { DaemonHub, type HubOptions } from './hub.js';
export { STATUS_MAX_WAIT_MS, STATUS_STALL_MS, type DaemonStatus } from './presence.js';
export { newConnId, ownerToken, type DaemonMessage, type DaemonReply, type DaemonSocket, type Owner } from './protocol.js';
