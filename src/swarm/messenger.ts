/**
 * A person's message to a running swarm (POST /api/v1/swarm/{workflow_id}/message): stored in
 * the lead's mailbox, where the lead reads it in a journaled step and acts on it (a model call
 * that may add or change tasks). Owner only: a swarm another user (or tenant) started reads as
 * missing, as does one whose lead has left its loop (synthesizing), one that has ended and one
 * that never was.
 */
import { randomUUID } from 'node:crypto';
import { badRequest, notFound } from '../kernel/index.js';
import type { SwarmBoard } from './board.js';
import { LEAD, type Mailboxes } from './mailbox.js';

/** Longest message a person may send to a swarm (characters). */
export const MAX_PERSON_MESSAGE_CHARS = 10_000;

export const SWARM_NOT_FOUND = 'Swarm not found';

/** The 400 of a task asking for a swarm (context.force_swarm) while the swarm is disabled. */
export const SWARM_DISABLED = 'swarm is disabled on this server (config/features.yaml swarm.enabled, SWARM_ENABLED): context.force_swarm cannot be used';

/**
 * A swarm task whose lead has not written its task list yet (queued, or still planning): its
 * owner, or nothing when the task is not such a swarm (ended, not a swarm, unknown).
 */
export type UnplannedSwarm = (workflowId: string) => Promise<{ user_id: string; tenant_id: string } | undefined>;

export class SwarmMessenger {
  constructor(
    private readonly board: SwarmBoard,
    private readonly mail: Mailboxes,
    /** Messages to a swarm still planning wait in the lead's mailbox, which its first decision reads. */
    private readonly unplanned?: UnplannedSwarm,
  ) {}

  async deliver(p: { userId?: string; tenantId?: string }, workflowId: string, message: unknown): Promise<{ success: true; status: 'delivered' }> {
    if (typeof message !== 'string' || !message.trim()) throw badRequest('message is required (a non-empty string)');
    if (message.length > MAX_PERSON_MESSAGE_CHARS) throw badRequest(`message must be at most ${MAX_PERSON_MESSAGE_CHARS} characters`);
    const st = await this.board.state(workflowId);
    const owner = st ? (st.status === 'running' ? st.owner : undefined) : await this.unplanned?.(workflowId);
    if (!owner || owner.user_id !== (p.userId ?? '') || owner.tenant_id !== (p.tenantId ?? '')) throw notFound(SWARM_NOT_FOUND);
    const id = randomUUID();
    await this.mail.send(workflowId, LEAD, { kind: 'person', from: 'person', id, text: message.trim() }, `${workflowId}:person:${id}`);
    return { success: true, status: 'delivered' };
  }
}
