/**
 * The workflow event: what workers publish on svc.events.<workflow_id>, what the gateway
 * streams and what the archiver stores. seq is per workflow, 1, 2, 3, ... with no gap;
 * stream_id is "<ms>-<seq>" and is what SSE clients see as `id:`.
 */

export const EVENT_TYPES = [
  'WORKFLOW_STARTED',
  'WORKFLOW_COMPLETED',
  'WORKFLOW_PAUSING',
  'WORKFLOW_PAUSED',
  'WORKFLOW_RESUMED',
  'WORKFLOW_CANCELLING',
  'WORKFLOW_CANCELLED',
  'AGENT_STARTED',
  'AGENT_COMPLETED',
  'AGENT_THINKING',
  'STATUS_UPDATE',
  'DATA_PROCESSING',
  'PROGRESS',
  'WAITING',
  'ERROR_RECOVERY',
  'ERROR_OCCURRED',
  'LLM_PROMPT',
  'LLM_OUTPUT',
  'LLM_PARTIAL',
  'TOOL_INVOKED',
  'TOOL_OBSERVATION',
  'TEAM_RECRUITED',
  'TEAM_RETIRED',
  'TEAM_STATUS',
  'ROLE_ASSIGNED',
  'DELEGATION',
  'DEPENDENCY_SATISFIED',
  'BUDGET_THRESHOLD',
  'APPROVAL_REQUESTED',
  'APPROVAL_DECISION',
  'LEAD_DECISION',
  'TASKLIST_UPDATED',
  'RESEARCH_PLAN_READY',
  'REVIEW_USER_FEEDBACK',
  'RESEARCH_PLAN_UPDATED',
  'RESEARCH_PLAN_APPROVED',
  'STREAM_END',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface WorkflowEvent {
  workflow_id: string;
  seq: number;
  stream_id: string;
  type: EventType;
  agent_id: string;
  message: string;
  /** ISO 8601 */
  timestamp: string;
  payload?: Record<string, unknown>;
}

/** The delta-style names under which LLM events are delivered on SSE. */
export const SSE_EVENT_NAME: Partial<Record<EventType, string>> = {
  LLM_PARTIAL: 'thread.message.delta',
  LLM_OUTPUT: 'thread.message.completed',
};

export function sseEventName(type: string): string {
  return SSE_EVENT_NAME[type as EventType] ?? type;
}

export function streamId(ms: number, seq: number): string {
  return `${ms}-${seq}`;
}

/**
 * Parses a resume position: a stream id "<ms>-<seq>" or a plain sequence number.
 * Returns the last seq the client has seen, or undefined when the value is not valid.
 */
export function parseResumePoint(v: string | undefined | null): number | undefined {
  if (v === undefined || v === null) return undefined;
  const s = v.trim();
  if (s === '') return undefined;
  let m = /^\d+-(\d+)$/.exec(s);
  if (m) return Number(m[1]);
  m = /^(\d+)$/.exec(s);
  if (m) return Number(m[1]);
  return undefined;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
export const encodeEvent = (e: WorkflowEvent): Uint8Array => enc.encode(JSON.stringify(e));
export const decodeEvent = (b: Uint8Array): WorkflowEvent => JSON.parse(dec.decode(b)) as WorkflowEvent;
export const msgIdOf = (workflowId: string, seq: number) => `${workflowId}:${seq}`;

/**
 * Puts one workflow's events back in seq order: each is released once, after every lower
 * seq. Events may arrive twice (a re-sent publish, a replay overlapping the live feed) or
 * out of order (a publish retried after a later one was stored); held ones wait for the
 * missing seq. `last` is the highest seq released.
 */
export class SeqOrder<T extends { seq: number }> {
  private readonly held = new Map<number, T>();
  constructor(public last = 0) {}

  /** The events that `e` makes deliverable, in order (none when it is old or early). */
  push(e: T): T[] {
    if (e.seq <= this.last) return [];
    if (e.seq !== this.last + 1) {
      this.held.set(e.seq, e);
      return [];
    }
    const out = [e];
    this.last = e.seq;
    for (let n = this.held.get(this.last + 1); n; n = this.held.get(this.last + 1)) {
      this.held.delete(n.seq);
      out.push(n);
      this.last = n.seq;
    }
    return out;
  }

  /** Events waiting for a lower seq. */
  get waiting(): number {
    return this.held.size;
  }

  /** Moves the start past seqs that will never come (expired), releasing what follows. */
  skipTo(last: number): T[] {
    if (last <= this.last) return [];
    this.last = last;
    for (const s of this.held.keys()) if (s <= last) this.held.delete(s);
    const next = this.held.get(last + 1);
    if (!next) return [];
    this.held.delete(last + 1);
    return this.push(next);
  }
}

/**
 * The notice a stream client gets, before anything else, when its resume point is older
 * than what is retained: events after `requestedAfter` up to `firstAvailable - 1` are gone.
 */
export function replayGap(requestedAfter: number, firstAvailable: number) {
  return {
    type: 'REPLAY_GAP' as const,
    message: `Events after seq ${requestedAfter} up to ${firstAvailable - 1} are no longer retained; replay continues from seq ${firstAvailable}`,
    requested_after: requestedAfter,
    first_available_seq: firstAvailable,
    timestamp: new Date().toISOString(),
  };
}
