/**
 * Daemon clients (GET /v1/ws/messages): the protocol's claim-once arbitration. The WebSocket
 * endpoint, dispatch to connections and the expiry sweeper come with the rest of the daemon
 * work; `ClaimBoard` is what every gateway process arbitrates through.
 */
export { ClaimBoard, type ClaimMeta } from './claims.js';
export { DaemonHub, newConnId, ownerToken, type DaemonMessage, type DaemonSocket, type HubOptions, type Owner } from './hub.js';
