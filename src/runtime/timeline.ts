/**
 * The deterministic timeline of a workflow: its steps (name, agent, start, end, duration,
 * status, retries) and the workflow's own start, end and duration, rebuilt from what the
 * workflow left behind: its archived events and its step journal (see WorkflowContext in
 * ./context.ts). Entry points: `loadTimeline` (reads both, then builds) and `buildTimeline`
 * (pure: the same input gives the same output).
 *
 * With the journal (JOURNAL stream, 7 days), every journaled step is one step of the
 * timeline. Its events are those emitted between the previous journaled step's `seqAfter`
 * and its own, except that an agent's events (AGENT_STARTED ... AGENT_COMPLETED and what
 * follows under the same agent id) stay together and go to the step that finished with
 * that agent: steps run in parallel (complex mode) interleave their events, and a step's
 * agent is the one whose AGENT_COMPLETED precedes the step's `seqAfter` (ties broken by the
 * number the step and the agent share: subtask-2 / agent-2). A step starts at its first
 * event (or, when it emitted none, when the step before it ended) and ends at its journal
 * entry's `at`. An agent that started but belongs to no journaled step is a step still
 * `running` (the task is not finished) or `interrupted` (it is: the step failed or was
 * cancelled).
 *
 * Without the journal (expired), steps are derived from the events only: `start`
 * (WORKFLOW_STARTED), one step per agent run (named after the workflow's agents: planner ->
 * plan, agent-N -> subtask-N, synthesizer -> synthesize, simple-agent -> agent) and
 * `finish` (the terminal events); a step without events of its own (history) is not seen.
 *
 * Retries: ERROR_RECOVERY events naming the step (payload.step: a step cut off by a crash
 * and run again from its start), and ERROR_RECOVERY events without a step (a retryable
 * failure retried in place) emitted while the step's agent was running or inside its
 * window. A journaled step with retries has status `retried`, without `completed`.
 */
import type { JournalLog } from '../bus/index.js';
import type { JournalEntry } from './context.js';

/** The fields of an event the timeline uses. */
export interface TimelineEvent {
  seq: number;
  type: string;
  agentId: string;
  at: Date;
  /** ERROR_RECOVERY: the step it names (payload.step), if any. */
  step?: string | null;
}

export type JournalMark = Pick<JournalEntry, 'seqAfter' | 'at'>;

export interface TimelineInput {
  workflowId: string;
  /** The task's status (TASK_STATUS_*). */
  status: string;
  createdAt?: Date | null;
  completedAt?: Date | null;
  events: readonly TimelineEvent[];
  /** Step name -> journal entry; empty when the journal has expired. */
  journal: ReadonlyMap<string, JournalMark>;
}

export type StepStatus = 'completed' | 'retried' | 'running' | 'interrupted';

export interface TimelineStep {
  name: string;
  /** The agent that ran the step; `orchestrator` for the workflow's own steps; null without events. */
  agent: string | null;
  status: StepStatus;
  startedAt: Date | null;
  endedAt: Date | null;
  durationMs: number | null;
  retries: number;
  firstSeq: number | null;
  lastSeq: number | null;
  /** The journal's seqAfter (journaled steps only). */
  seqAfter: number | null;
  eventCount: number;
  journaled: boolean;
}

export interface Timeline {
  workflowId: string;
  status: string;
  /** `journal`: steps from the step journal and the events; `events`: from the events only. */
  source: 'journal' | 'events';
  createdAt: Date | null;
  startedAt: Date | null;
  endedAt: Date | null;
  durationMs: number | null;
  steps: TimelineStep[];
  eventCount: number;
  retries: number;
}

const ORCHESTRATOR = 'orchestrator';
const OPEN_STATUSES = new Set(['TASK_STATUS_UNSPECIFIED', 'TASK_STATUS_QUEUED', 'TASK_STATUS_RUNNING', 'TASK_STATUS_PAUSED']);
const FINISH_EVENTS = new Set(['WORKFLOW_COMPLETED', 'WORKFLOW_CANCELLED', 'ERROR_OCCURRED', 'STREAM_END']);

/** One run of an agent: AGENT_STARTED ... AGENT_COMPLETED and what follows under its id. */
interface AgentRun {
  agent: string;
  events: TimelineEvent[];
  firstSeq: number;
  /** Seq of its AGENT_COMPLETED, once seen. */
  completedSeq?: number;
  owner?: Draft;
}

interface Draft {
  name: string;
  journaled: boolean;
  seqAfter?: number;
  /** Journal `at` (journaled steps). */
  endedAt?: Date;
  agent?: string;
  events: TimelineEvent[];
  /** Position among the steps when it has no event of its own. */
  orderKey: number;
  /** Tie-break: position in the list the step was made in. */
  index: number;
}

const numberOf = (name: string) => /-(\d+)$/.exec(name)?.[1];
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/**
 * Journal entries with the same seqAfter and the same time (a step that emitted nothing,
 * journaled within the millisecond of the step before): the workflow's fixed order decides.
 */
const RANK: Record<string, number> = { start: 0, history: 1, finish: 3 };
const rank = (name: string) => RANK[name] ?? 2;

/** The step an agent runs in the workflows of ./workflows.ts (used without the journal). */
export function stepOfAgent(agent: string): string {
  if (agent === 'planner') return 'plan';
  if (agent === 'synthesizer') return 'synthesize';
  if (agent === 'simple-agent') return 'agent';
  const n = /^agent-(\d+)$/.exec(agent)?.[1];
  return n ? `subtask-${n}` : agent;
}

function agentRuns(events: readonly TimelineEvent[]): AgentRun[] {
  const runs: AgentRun[] = [];
  const current = new Map<string, AgentRun>();
  for (const e of events) {
    if (!e.agentId || e.agentId === ORCHESTRATOR) continue;
    let run = current.get(e.agentId);
    // A new run starts at AGENT_STARTED after a completed one; AGENT_STARTED while a run is
    // open is the same run started again (after a crash or an in-place retry).
    if (!run || (e.type === 'AGENT_STARTED' && run.completedSeq !== undefined)) {
      run = { agent: e.agentId, events: [], firstSeq: e.seq };
      runs.push(run);
      current.set(e.agentId, run);
    }
    run.events.push(e);
    if (e.type === 'AGENT_COMPLETED') run.completedSeq = e.seq;
  }
  return runs;
}

/** The run that was open (started, not yet completed) at `seq`: the latest started. */
function openRunAt(runs: AgentRun[], seq: number): AgentRun | undefined {
  let found: AgentRun | undefined;
  for (const r of runs) if (r.firstSeq < seq && (r.completedSeq === undefined || r.completedSeq > seq)) found = r;
  return found;
}

/** Builds the timeline. Pure and deterministic: the order of `events` and `journal` does not matter. */
export function buildTimeline(input: TimelineInput): Timeline {
  const events = dedupeBySeq(input.events);
  const open = OPEN_STATUSES.has(input.status);
  const runs = agentRuns(events);
  const journaled = [...input.journal]
    .map(([name, j]) => ({ name, seqAfter: j.seqAfter, at: new Date(j.at) }))
    .sort((a, b) => a.seqAfter - b.seqAfter || a.at.getTime() - b.at.getTime() || rank(a.name) - rank(b.name) || byName(a.name, b.name));
  const source: Timeline['source'] = journaled.length ? 'journal' : 'events';
  const drafts = source === 'journal' ? fromJournal(journaled, events, runs, open) : fromEvents(events, runs);

  const steps = drafts
    .map((d) => ({ d, first: d.events.length ? d.events[0].seq : d.orderKey }))
    .sort((a, b) => a.first - b.first || a.d.index - b.d.index)
    .map(({ d }) => d);
  // A step that emitted nothing began when the step journaled before it ended.
  const byJournal = [...drafts].filter((d) => d.journaled).sort((a, b) => a.index - b.index);
  const workflowStart = events.find((e) => e.type === 'WORKFLOW_STARTED')?.at ?? events[0]?.at ?? null;
  const out = steps.map((d) => {
    const prev = d.journaled ? byJournal[byJournal.indexOf(d) - 1] : undefined;
    const startedAt = d.events[0]?.at ?? prev?.endedAt ?? workflowStart;
    const last = d.events.at(-1);
    let status: StepStatus;
    let endedAt: Date | null;
    const retries = d.events.filter((e) => e.type === 'ERROR_RECOVERY').length;
    if (d.journaled) {
      endedAt = d.endedAt ?? null;
      status = retries ? 'retried' : 'completed';
    } else if (isComplete(d)) {
      endedAt = last?.at ?? null;
      status = retries ? 'retried' : 'completed';
    } else if (open) {
      endedAt = null;
      status = 'running';
    } else {
      endedAt = last?.at ?? null;
      status = 'interrupted';
    }
    const step: TimelineStep = {
      name: d.name,
      agent: d.agent ?? (d.events.length ? ORCHESTRATOR : null),
      status,
      startedAt,
      endedAt,
      durationMs: startedAt && endedAt ? Math.max(0, endedAt.getTime() - startedAt.getTime()) : null,
      retries,
      firstSeq: d.events[0]?.seq ?? null,
      lastSeq: last?.seq ?? null,
      seqAfter: d.seqAfter ?? null,
      eventCount: d.events.length,
      journaled: d.journaled,
    };
    return step;
  });

  const streamEnd = events.find((e) => e.type === 'STREAM_END');
  const endedAt = open ? null : (streamEnd?.at ?? input.completedAt ?? events.at(-1)?.at ?? null);
  return {
    workflowId: input.workflowId,
    status: input.status,
    source,
    createdAt: input.createdAt ?? null,
    startedAt: workflowStart,
    endedAt,
    durationMs: workflowStart && endedAt ? Math.max(0, endedAt.getTime() - workflowStart.getTime()) : null,
    steps: out,
    eventCount: events.length,
    retries: out.reduce((n, s) => n + s.retries, 0),
  };
}

/** A step not journaled that still finished: its agent completed, or its stream ended. */
function isComplete(d: Draft): boolean {
  if (d.agent && d.agent !== ORCHESTRATOR) return d.events.some((e) => e.type === 'AGENT_COMPLETED' && e.agentId === d.agent);
  if (d.name === 'start') return d.events.some((e) => e.type === 'WORKFLOW_STARTED');
  if (d.name === 'finish') return d.events.some((e) => e.type === 'STREAM_END');
  return false;
}

function dedupeBySeq(events: readonly TimelineEvent[]): TimelineEvent[] {
  const bySeq = new Map<number, TimelineEvent>();
  for (const e of events) if (!bySeq.has(e.seq)) bySeq.set(e.seq, e);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

function sortEvents(d: Draft): void {
  d.events.sort((a, b) => a.seq - b.seq);
}

/** Steps from the journal; agent runs no journaled step claims become steps of their own. */
function fromJournal(journaled: { name: string; seqAfter: number; at: Date }[], events: TimelineEvent[], runs: AgentRun[], open: boolean): Draft[] {
  const drafts: Draft[] = journaled.map((j, i) => ({
    name: j.name,
    journaled: true,
    seqAfter: j.seqAfter,
    endedAt: j.at,
    events: [],
    orderKey: (i ? journaled[i - 1].seqAfter : 0) + 0.5,
    index: i,
  }));
  const byStep = new Map(drafts.map((d) => [d.name, d]));

  // Each journaled step claims the agent whose run completed (first) before its seqAfter.
  for (const d of drafts) {
    const candidates = runs
      .filter((r) => !r.owner && r.completedSeq !== undefined && r.completedSeq <= d.seqAfter!)
      .sort((a, b) => a.completedSeq! - b.completedSeq!);
    if (!candidates.length) continue;
    const n = numberOf(d.name);
    const pick = candidates.find((r) => n !== undefined && numberOf(r.agent) === n) ?? candidates[0];
    d.agent = pick.agent;
    // Earlier runs of the same agent in this step (cut off by a crash after AGENT_COMPLETED,
    // before the journal entry) belong to it too.
    for (const r of runs) if (!r.owner && r.agent === pick.agent && r.firstSeq <= d.seqAfter!) r.owner = d;
  }

  const windowOf = (seq: number) => drafts.find((d) => d.seqAfter! >= seq);
  const trailing: TimelineEvent[] = [];
  for (const e of events) {
    if (e.agentId && e.agentId !== ORCHESTRATOR) continue; // with its agent run
    if (e.type === 'ERROR_RECOVERY') {
      // A retry belongs to the step it names, else to the agent run it interrupted.
      const named = e.step ? byStep.get(e.step) : undefined;
      if (named) {
        named.events.push(e);
        continue;
      }
      const run = openRunAt(runs, e.seq);
      if (run) {
        run.events.push(e);
        continue;
      }
    }
    const w = windowOf(e.seq);
    if (w) w.events.push(e);
    else trailing.push(e);
  }
  let index = drafts.length;
  for (const r of runs) {
    if (r.owner) {
      r.owner.events.push(...r.events);
      continue;
    }
    // An agent run no journaled step claims: running, or cut off for good.
    const named = r.events.find((e) => e.type === 'ERROR_RECOVERY' && e.step && !byStep.has(e.step))?.step;
    drafts.push({ name: named ?? stepOfAgent(r.agent), journaled: false, agent: r.agent, events: r.events, orderKey: r.firstSeq, index: index++ });
  }
  if (trailing.length) {
    const has = (types: Set<string> | string) => trailing.some((e) => (typeof types === 'string' ? e.type === types : types.has(e.type)));
    const name =
      has('WORKFLOW_STARTED') && !byStep.has('start')
        ? 'start'
        : has(FINISH_EVENTS) && !byStep.has('finish')
          ? 'finish'
          : (trailing.find((e) => e.type === 'ERROR_RECOVERY' && e.step)?.step ?? (open ? 'pending' : 'unfinished'));
    drafts.push({ name, journaled: false, events: trailing, orderKey: trailing[0].seq, index });
  }
  drafts.forEach(sortEvents);
  return drafts;
}

/** Steps from the events alone: start, one per agent run, finish. */
function fromEvents(events: TimelineEvent[], runs: AgentRun[]): Draft[] {
  const drafts: Draft[] = [];
  let index = 0;
  const startIdx = events.findIndex((e) => e.type === 'WORKFLOW_STARTED');
  const start: Draft | undefined =
    startIdx >= 0 ? { name: 'start', journaled: false, agent: ORCHESTRATOR, events: [], orderKey: events[startIdx].seq, index: index++ } : undefined;
  if (start) drafts.push(start);
  for (const r of runs) {
    const named = r.events.find((e) => e.type === 'ERROR_RECOVERY' && e.step)?.step;
    const d: Draft = { name: named ?? stepOfAgent(r.agent), journaled: false, agent: r.agent, events: r.events, orderKey: r.firstSeq, index: index++ };
    r.owner = d;
    drafts.push(d);
  }
  const finishSeq = events.find((e) => (!e.agentId || e.agentId === ORCHESTRATOR) && FINISH_EVENTS.has(e.type))?.seq;
  const finish: Draft | undefined =
    finishSeq !== undefined ? { name: 'finish', journaled: false, agent: ORCHESTRATOR, events: [], orderKey: finishSeq, index: index++ } : undefined;
  if (finish) drafts.push(finish);
  const stepsByName = new Map(drafts.map((d) => [d.name, d]));
  for (const e of events) {
    if (e.agentId && e.agentId !== ORCHESTRATOR) continue;
    if (start && e.seq <= events[startIdx].seq) {
      start.events.push(e);
      continue;
    }
    if (finish && e.seq >= finishSeq!) {
      finish.events.push(e);
      continue;
    }
    if (e.type === 'ERROR_RECOVERY') {
      const named = e.step ? stepsByName.get(e.step) : undefined;
      const run = named ? undefined : openRunAt(runs, e.seq);
      const target = named ?? run?.owner;
      if (target) {
        target.events.push(e);
        continue;
      }
    }
    // Orchestrator events between steps (pause, resume, history compression) belong to the
    // step that follows them, or to the last one.
    const next = drafts.filter((d) => d !== start && d !== finish && d.orderKey > e.seq).sort((a, b) => a.orderKey - b.orderKey)[0];
    (next ?? finish ?? drafts.at(-1) ?? pushOrphan(drafts, e, index++)).events.push(e);
  }
  drafts.forEach(sortEvents);
  return drafts.filter((d) => d.events.length);
}

function pushOrphan(drafts: Draft[], e: TimelineEvent, index: number): Draft {
  const d: Draft = { name: 'unfinished', journaled: false, events: [], orderKey: e.seq, index };
  drafts.push(d);
  return d;
}

/** The workflow's journal entries (step name -> seqAfter, at); empty once they expired. */
export async function readJournal(journal: JournalLog, workflowId: string): Promise<Map<string, JournalMark>> {
  const out = new Map<string, JournalMark>();
  for (const [step, j] of await journal.read(workflowId)) {
    if (typeof j.seqAfter === 'number' && typeof j.at === 'string' && !Number.isNaN(Date.parse(j.at))) out.set(step, { seqAfter: j.seqAfter, at: j.at });
  }
  return out;
}

/**
 * Reads the archived events and the journal of a workflow and builds its timeline. When the
 * journal cannot be read (NATS unreachable), the timeline is derived from the events.
 */
export async function loadTimeline(
  deps: { journal: JournalLog; events: (workflowId: string) => Promise<TimelineEvent[]> },
  task: Omit<TimelineInput, 'events' | 'journal'>,
): Promise<Timeline> {
  const [events, journal] = await Promise.all([
    deps.events(task.workflowId),
    readJournal(deps.journal, task.workflowId).catch(() => new Map<string, JournalMark>()),
  ]);
  return buildTimeline({ ...task, events, journal });
}
