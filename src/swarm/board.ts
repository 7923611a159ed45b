/**
 * A swarm's shared state in KV: its task list (bucket SWARM_TASKLISTS, key <workflow_id>: the
 * owner, whether it runs, the tasks) and its workspace of agent results (bucket
 * SWARM_WORKSPACE, key <workflow_id>; the lead posts its agents' results there as it retires
 * them). Every write is a compare-and-set on the key's revision, retried on a conflict, so
 * concurrent writers never lose one another's change. Entries live a day.
 */
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { BUCKETS, coreReplicas, kvKeys, openBucket, type Bus } from '../bus/index.js';

export type SwarmTaskStatus = 'pending' | 'assigned' | 'done' | 'failed' | 'blocked';

export interface SwarmTask {
  id: string;
  description: string;
  status: SwarmTaskStatus;
  /** The agent working (or that worked) on it. */
  agent?: string;
  /** Where it came from: the lead's plan, a person's message, an agent's message. */
  source: 'plan' | 'person' | 'agent';
  /** Why it failed or is blocked. */
  note?: string;
}

export interface SwarmState {
  workflow_id: string;
  /** Who submitted the task: only they may message the swarm. */
  owner: { user_id: string; tenant_id: string };
  /**
   * running: people may message the lead; synthesizing: the lead left its loop (no message is
   * taken any more); ended: the swarm is over (agents still queued or running stop at once).
   */
  status: 'running' | 'synthesizing' | 'ended';
  tasks: SwarmTask[];
  updated_at: string;
}

export interface WorkspaceEntry {
  agent: string;
  task_id: string;
  /** The agent's result, cut to workspace_snippet_chars. */
  text: string;
  at: string;
}

/** How long a swarm's task list and workspace stay after their last write. */
export const SWARM_STATE_TTL_MS = 24 * 60 * 60 * 1000;
/** Workspace entries kept per swarm (agents are shown the last workspace_max_entries of them). */
export const WORKSPACE_KEEP = 100;

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Another writer got there first (an update on an old revision, a create of a key that exists). */
const conflict = (err: unknown) =>
  (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamWrongLastSequence) ||
  /wrong last sequence|exists/i.test((err as Error)?.message ?? '');

/** What this process last wrote to a key (its revision and value), to skip the read before its next write. */
type Written = Map<string, { revision: number; json: string }>;

/** Keys whose last write this process remembers (the oldest forgotten first). */
const WRITTEN_KEEP = 1000;

/**
 * Reads `key`, applies `fn`, writes back only if nobody wrote meanwhile (else again). The
 * first attempt starts from what this process last wrote there, when it remembers it (the
 * lead is a swarm's one writer: one round trip instead of two); another writer since makes
 * that write fail, and the key is read again.
 */
async function casUpdate<T>(kv: KV, key: string, fn: (cur: T | undefined) => T, written: Written): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const mine = attempt === 0 ? written.get(key) : undefined;
    let revision = mine?.revision;
    let cur = mine ? (JSON.parse(mine.json) as T) : undefined;
    if (!mine) {
      const e = await kv.get(key);
      cur = e && e.operation === 'PUT' && e.value.length ? (JSON.parse(dec.decode(e.value)) as T) : undefined;
      revision = e?.revision || undefined;
    }
    const next = fn(cur);
    const json = JSON.stringify(next);
    try {
      const r = revision ? await kv.update(key, enc.encode(json), revision) : await kv.create(key, enc.encode(json));
      written.delete(key);
      written.set(key, { revision: r, json });
      if (written.size > WRITTEN_KEEP) written.delete(written.keys().next().value!);
      return next;
    } catch (err) {
      written.delete(key);
      if (attempt >= 50 || !conflict(err)) throw err;
    }
  }
}

export class SwarmBoard {
  private readonly writtenLists: Written = new Map();
  private readonly writtenWorkspace: Written = new Map();

  private constructor(
    private readonly lists: KV,
    private readonly workspace: KV,
  ) {}

  static async open(bus: Pick<Bus, 'nc' | 'jsm'>): Promise<SwarmBoard> {
    const replicas = await coreReplicas(bus.jsm);
    const [lists, workspace] = await Promise.all([
      openBucket(bus.nc, bus.jsm, BUCKETS.swarmTasklists, { ttlMs: SWARM_STATE_TTL_MS, replicas }),
      openBucket(bus.nc, bus.jsm, BUCKETS.swarmWorkspace, { ttlMs: SWARM_STATE_TTL_MS, replicas }),
    ]);
    return new SwarmBoard(lists, workspace);
  }

  async state(workflowId: string): Promise<SwarmState | undefined> {
    const e = await this.lists.get(kvKeys.swarm(workflowId));
    return e && e.operation === 'PUT' && e.value.length ? (JSON.parse(dec.decode(e.value)) as SwarmState) : undefined;
  }

  /** Compare-and-set update of the swarm's state (`cur` undefined: none yet). */
  update(workflowId: string, fn: (cur: SwarmState | undefined) => SwarmState): Promise<SwarmState> {
    return casUpdate(this.lists, kvKeys.swarm(workflowId), fn, this.writtenLists);
  }

  /** Adds agents' results to the workspace in one write (one entry per agent and task: a re-post replaces it). */
  async post(workflowId: string, ...entries: WorkspaceEntry[]): Promise<void> {
    if (!entries.length) return;
    const same = (a: WorkspaceEntry, b: WorkspaceEntry) => a.agent === b.agent && a.task_id === b.task_id;
    await casUpdate<WorkspaceEntry[]>(
      this.workspace,
      kvKeys.swarm(workflowId),
      (cur) => [...(cur ?? []).filter((e) => !entries.some((n) => same(e, n))), ...entries].slice(-WORKSPACE_KEEP),
      this.writtenWorkspace,
    );
  }

  /** The last `n` workspace entries, oldest first. */
  async entries(workflowId: string, n: number): Promise<WorkspaceEntry[]> {
    if (n <= 0) return [];
    const e = await this.workspace.get(kvKeys.swarm(workflowId));
    const all = e && e.operation === 'PUT' && e.value.length ? (JSON.parse(dec.decode(e.value)) as WorkspaceEntry[]) : [];
    return all.slice(-n);
  }

  /** Whether the swarm is over (ended, or its task list gone): its agents must not run. */
  async ended(workflowId: string): Promise<boolean> {
    const st = await this.state(workflowId);
    return !st || st.status === 'ended';
  }

  /** Removes the swarm's workspace (its task list stays, marked ended, until it expires). */
  async clearWorkspace(workflowId: string): Promise<void> {
    this.writtenWorkspace.delete(kvKeys.swarm(workflowId));
    await this.workspace.delete(kvKeys.swarm(workflowId)).catch(() => undefined);
  }
}
