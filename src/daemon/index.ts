/**
 * Daemon clients (GET /v1/ws/messages, whose socket plumbing is the gateway's): the hub of one
 * gateway's connections (dispatch, claims, replies, the sweeper) and `ClaimBoard`, the
 * claim-once arbitration every gateway process goes through.
 */
export { ClaimBoard, type ClaimMeta } from './claims.js';
export { DaemonHub, newConnId, ownerToken, type DaemonMessage, type DaemonReply, type DaemonSocket, type HubOptions, type Owner } from './hub.js';
