/**
 * What the swarm view shows of a swarm task (context.force_swarm), folded from its events: the
 * agents (the lead, then agent-1, agent-2, ... from TEAM_RECRUITED, AGENT_STARTED, PROGRESS,
 * AGENT_COMPLETED, TEAM_RETIRED, TEAM_STATUS), the task list (the latest TASKLIST_UPDATED) and
 * the messages of the swarm (the lead's decisions, LEAD_DECISION, with the person's messages they
 * name; the agents' reports to the lead). `useSwarm` reads the stored events
 * (GET /api/v1/tasks/{id}/events), then follows the stream from the last seq (followStream; after a
 * REPLAY_GAP the stored events fill what the stream no longer holds): an
 * event is folded once, whatever the order of the two, as the fold keeps only later seqs.
 * Agents' messages to one another (send_message) stay in their mailboxes: no event carries them.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, followStream } from '../client/index.js';
import { auth, messageOf, refresh } from './session.js';
import { EVENTS_PAGE, eventsAfter } from './events-page.js';
import { PHASES } from './format.js';

/** The agent id of the lead's events, and of the supervisor's (the swarm workflow's). */
export const LEAD = 'swarm-lead';
export const SUPERVISOR = 'swarm-supervisor';
/** Who a person's message is shown from. */
export const PERSON = 'you';

export interface SwarmAgent {
  id: string;
  /** The lead, or the task the agent was recruited for. */
  role: string;
  task?: string;
  /** recruited, running, done, failed (the lead: planning, leading, synthesizing, then the task's end). */
  status: string;
  iterations: number;
}

export interface SwarmTaskRow {
  id: string;
  description: string;
  /** pending, assigned, done, failed, blocked */
  status: string;
  agent?: string;
  source?: string;
  note?: string;
}

export interface SwarmMessage {
  key: string;
  seq: number;
  at: string;
  from: string;
  to: string;
  text: string;
  /** The lead's reason, an agent's error. */
  detail?: string;
  /** A person's message (matched with the ones this page sent). */
  person?: boolean;
}

export interface SwarmView {
  agents: SwarmAgent[];
  tasks: SwarmTaskRow[];
  messages: SwarmMessage[];
  lastSeq: number;
  /** STREAM_END seen. */
  ended: boolean;
  /** running, paused, completed, failed, cancelled (from the workflow events). */
  phase: string;
  /** An event of the lead or the supervisor was seen. */
  isSwarm: boolean;
}

/** One event as the stream and the stored history give it. */
export interface SwarmEvent {
  seq: number;
  type: string;
  agent_id: string;
  message: string;
  timestamp: string;
  payload?: Record<string, unknown>;
}

export const EMPTY_SWARM: SwarmView = { agents: [], tasks: [], messages: [], lastSeq: 0, ended: false, phase: 'connecting', isSwarm: false };

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object') : []);

/** The agents with `id` changed by `fn` (added first when new). */
function withAgent(agents: SwarmAgent[], id: string, fn: (a: SwarmAgent) => SwarmAgent): SwarmAgent[] {
  const i = agents.findIndex((a) => a.id === id);
  if (i < 0) return [...agents, fn({ id, role: '', status: 'recruited', iterations: 0 })];
  const next = agents.slice();
  next[i] = fn(agents[i]!);
  return next;
}

const leadStatus = (status: string) => (a: SwarmAgent) => ({ ...a, role: 'Lead: plans, recruits, decides', status });

/** The messages an event stands for (none for most). */
function messagesOf(e: SwarmEvent): Omit<SwarmMessage, 'key' | 'seq' | 'at'>[] {
  const p = e.payload ?? {};
  if (e.type === 'LEAD_DECISION') {
    const reason = str(p.reason);
    const decision = str(p.decision);
    if (decision === 'person_message' || decision === 'message_ignored') {
      return [
        { from: PERSON, to: LEAD, text: str(p.message) ?? '', person: true },
        { from: LEAD, to: PERSON, text: e.message, detail: reason },
      ];
    }
    let to = 'team';
    if (decision === 'recruit')
      to =
        list(p.agents)
          .map((a) => str(a.agent_id) ?? '')
          .join(', ') || to;
    else if (decision === 'retire') to = str(p.agent_id) ?? to;
    else if (decision === 'stop' && Array.isArray(p.agents) && p.agents.length) to = p.agents.map(String).join(', ');
    return [{ from: LEAD, to, text: e.message, detail: reason }];
  }
  if (e.type === 'AGENT_COMPLETED' && e.agent_id.startsWith('agent-')) {
    return [{ from: e.agent_id, to: LEAD, text: e.message, detail: str(p.error) }];
  }
  return [];
}

/** The view after one event (the same view when its seq was seen before). */
export function foldSwarm(v: SwarmView, e: SwarmEvent): SwarmView {
  if (typeof e.seq !== 'number' || e.seq <= v.lastSeq) return v;
  const p = e.payload ?? {};
  const next: SwarmView = { ...v, lastSeq: e.seq };
  if (e.type === 'STREAM_END') next.ended = true;
  if (PHASES[e.type]) next.phase = PHASES[e.type]!;
  else if (next.phase === 'connecting') next.phase = 'running';
  if (e.agent_id === LEAD || e.agent_id === SUPERVISOR) next.isSwarm = true;

  // The lead: its own row, first, following the swarm's stages.
  if (e.agent_id === SUPERVISOR && e.type === 'PROGRESS') {
    const stage = str(p.stage);
    if (stage === 'planning' || stage === 'synthesizing') next.agents = withAgent(next.agents, LEAD, leadStatus(stage));
  } else if (e.agent_id === LEAD && e.type === 'LEAD_DECISION' && str(p.decision) === 'plan') {
    next.agents = withAgent(next.agents, LEAD, leadStatus('leading'));
  } else if (next.isSwarm && PHASES[e.type] && e.type !== 'WORKFLOW_STARTED') {
    next.agents = withAgent(next.agents, LEAD, leadStatus(PHASES[e.type]!));
  }

  switch (e.type) {
    case 'TEAM_RECRUITED':
      for (const a of list(p.agents)) {
        const id = str(a.agent_id);
        if (id) next.agents = withAgent(next.agents, id, (x) => ({ ...x, role: str(a.description) ?? x.role, task: str(a.task_id) ?? x.task }));
      }
      break;
    case 'AGENT_STARTED':
      if (e.agent_id.startsWith('agent-')) next.agents = withAgent(next.agents, e.agent_id, (x) => ({ ...x, status: 'running' }));
      break;
    case 'PROGRESS':
      if (e.agent_id.startsWith('agent-') && typeof p.iteration === 'number') {
        const i = p.iteration;
        next.agents = withAgent(next.agents, e.agent_id, (x) => ({ ...x, iterations: Math.max(x.iterations, i) }));
      }
      break;
    case 'AGENT_COMPLETED':
      if (e.agent_id.startsWith('agent-') && p.success === false) next.agents = withAgent(next.agents, e.agent_id, (x) => ({ ...x, status: 'failed' }));
      break;
    case 'TEAM_RETIRED': {
      const id = str(p.agent_id);
      if (id) next.agents = withAgent(next.agents, id, (x) => ({ ...x, status: p.success === false ? 'failed' : 'done' }));
      break;
    }
    case 'TEAM_STATUS':
      for (const a of list(p.agents)) {
        const id = str(a.agent_id);
        const status = str(a.status);
        if (!id || !status) continue;
        next.agents = withAgent(next.agents, id, (x) => ({
          ...x,
          task: x.task ?? str(a.task_id),
          // "running" counts a recruit that has not started yet too: the agent's own events say which.
          status: status === 'running' && x.status === 'recruited' ? x.status : status,
        }));
      }
      break;
    case 'TASKLIST_UPDATED':
      next.tasks = list(p.tasks).map((t) => ({
        id: str(t.id) ?? '',
        description: str(t.description) ?? '',
        status: str(t.status) ?? '',
        agent: str(t.agent),
        source: str(t.source),
        note: str(t.note),
      }));
      for (const t of next.tasks) {
        if (t.agent) next.agents = withAgent(next.agents, t.agent, (x) => ({ ...x, task: x.task ?? t.id, role: x.role || t.description }));
      }
      break;
  }

  const msgs = messagesOf(e);
  if (msgs.length) next.messages = [...v.messages, ...msgs.map((m, i) => ({ ...m, key: `${e.seq}-${i}`, seq: e.seq, at: e.timestamp }))];
  return next;
}

/** The swarm view of task `id`: its stored events, then its stream followed to the end. */
export function useSwarm(id: string): { view: SwarmView; error?: string } {
  const [view, setView] = useState<SwarmView>(EMPTY_SWARM);
  const [error, setError] = useState<string>();
  useEffect(() => {
    let v = EMPTY_SWARM;
    setView(v);
    setError(undefined);
    const ac = new AbortController();
    const take = (e: SwarmEvent) => {
      const n = foldSwarm(v, e);
      if (n !== v) {
        v = n;
        setView(v);
      }
    };
    // The stored events after the last one taken, every page.
    const readStored = async () => {
      for (;;) {
        const page = await eventsAfter(id, v.lastSeq, ac.signal);
        for (const e of page) take(e);
        if (page.length < EVENTS_PAGE) return;
      }
    };
    void (async () => {
      try {
        await readStored();
        for (let attempt = 0; attempt < 2 && !v.ended; attempt++) {
          try {
            const from = v.lastSeq ? String(v.lastSeq) : undefined;
            for await (const e of followStream({ ...auth(), workflowId: id, lastEventId: from, signal: ac.signal })) {
              // The stream no longer holds what came after our last event (a resume after a long
              // break): read it from the stored events before the stream's next one is taken.
              if (e.event === 'REPLAY_GAP') {
                await readStored();
                continue;
              }
              const d = e.data as Partial<SwarmEvent> | undefined;
              if (!d || typeof d !== 'object' || typeof d.seq !== 'number') continue;
              take({
                seq: d.seq,
                type: d.type ?? e.event,
                agent_id: d.agent_id ?? '',
                message: d.message ?? '',
                timestamp: d.timestamp ?? '',
                payload: d.payload,
              });
            }
            return;
          } catch (err) {
            if (err instanceof ApiError && err.status === 401 && attempt === 0 && (await refresh())) continue;
            throw err;
          }
        }
      } catch (err) {
        if (!ac.signal.aborted) setError(messageOf(err));
      }
    })();
    return () => ac.abort();
  }, [id]);
  return { view, error };
}
