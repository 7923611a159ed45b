/**
 * swarm (context.force_swarm): the lead of a swarm of persistent agents, run as the workflow
 * actor. It plans a task list with the model (a JSON array; a model that gives none: the
 * request's own parts), keeps it in KV (SWARM_TASKLISTS, compare-and-set, TASKLIST_UPDATED on
 * every change), recruits one agent per task (a start message on SWARM_AGENTS: the agents run
 * on any worker process, not here), then acts on what lands in its mailbox: agents' events
 * (emitted here, so the workflow's seq stays one gap-free sequence), their results (the agent
 * is retired), their messages, and people's messages (a model call that may add tasks, which
 * get agents of their own). It enforces the swarm limits, synthesises the answer and purges
 * the swarm's mailboxes. When every agent failed (or a swarm limit stopped the swarm before
 * any finished), the task is routed again without force_swarm (the mode's workflow, in this
 * actor); not when one of the task's budgets stopped it (they bind the re-route too).
 *
 * Events: WORKFLOW_STARTED / WORKFLOW_COMPLETED from swarm-supervisor (the worker's); PROGRESS
 * (planning, synthesizing) from swarm-supervisor; LEAD_DECISION, TASKLIST_UPDATED,
 * TEAM_RECRUITED, TEAM_RETIRED, TEAM_STATUS from swarm-lead; AGENT_STARTED, PROGRESS
 * (iteration), AGENT_COMPLETED under each agent's name.
 *
 * Durable: every decision is one journaled step whose result is the lead's whole state (with
 * the mailbox position it read up to): the mail available is read, its events emitted and
 * acted on in that step, from the position the previous state records.
 */
import { modelTurn, type AgentContext, type ModelCall } from '../agents/index.js';
import { needsApproval } from '../approvals/index.js';
import { AppError, Code } from '../kernel/index.js';
import { BusDesync, HandBack, Passivate, type WorkflowContext } from '../runtime/index.js';
import { LEAD, recruitAgent, workspaceSnippet, type AgentStart, type MailReader, type Received, type SwarmTask, type WorkspaceEntry } from '../swarm/index.js';
import { parsePlan, personMessageInput, personMessageSystem, swarmPlanPrompt, synthesisPrompt, tasksForMessage } from './swarm-plan.js';
import {
  DEFAULT_STOP_GRACE_MS,
  SWARM_LEAD,
  SWARM_SUPERVISOR,
  SwarmFailed,
  budgetReached,
  limitReached,
  swarmOutputs,
  type AgentRec,
  type LeadState,
  type SwarmRuntime,
} from './swarm-state.js';
import { breakdown, recordOf, sumUsage } from './usage.js';
import { DEFAULT_AGENT_TIMEOUT_MS, type Prepared, type Workflow, type WorkflowResult } from './workflow.js';

/** Most mailbox messages acted on in one step. */
const MAX_BATCH = 256;
/** The longest the lead waits for mail before it decides anyway (its pause checkpoint, its limits). */
const IDLE_TICK_MS = 5000;
/** Longest agent message kept for the synthesis. */
const MAX_NOTE_CHARS = 2000;

const callOf = (agentId: string, step: string, t: { model: string; provider: string; usage: ModelCall['usage']; tier?: ModelCall['tier'] }): ModelCall => ({
  agentId,
  step,
  model: t.model,
  provider: t.provider,
  usage: t.usage,
  ...(t.tier ? { tier: t.tier } : {}),
});

/** The lead's own model calls (plan, people's messages) stream no LLM_PARTIAL: they are decisions, told as LEAD_DECISION. */
function quiet(ctx: WorkflowContext): AgentContext {
  return {
    step: (name, fn, o) => ctx.step(name, fn, o),
    isRecorded: (name) => ctx.isRecorded(name),
    emit: (type, agentId, message, payload) => (type === 'LLM_PARTIAL' ? undefined : ctx.emit(type, agentId, message, payload)),
    checkpoint: () => ctx.checkpoint(),
    get signal() {
      return ctx.signal;
    },
  };
}

/**
 * Whether the lead's failure ends the task for good: a cancel, the task's time limit, a failure
 * the worker does not retry. Not a hand-back, a lost lease, a wait for a person (passivate), a
 * NATS failure or a retryable error (the worker runs the workflow again from its journal).
 */
export function endsTask(err: unknown, signal: AbortSignal): boolean {
  if (signal.aborted) {
    const reason = (signal.reason as Error | undefined)?.name;
    return reason === 'CancelRequested' || reason === 'TimeoutReached';
  }
  if (err instanceof HandBack || err instanceof BusDesync || err instanceof Passivate || (err as { passivates?: unknown })?.passivates) return false;
  return err instanceof AppError && !err.retryable;
}

/** The swarm workflow; `reroute` runs the task as normal routing would without force_swarm. */
export function swarmWorkflow(reroute: Workflow): Workflow {
  return async (ctx, p) => {
    const sw = p.deps.swarm;
    if (!sw) throw new AppError(Code.FailedPrecondition, 'the swarm runtime is not available in this worker');
    const lead = new Lead(ctx, p, sw);
    return lead.run(reroute);
  };
}

class Lead {
  private reader?: MailReader;
  private readonly wf: string;
  private readonly grace: number;

  constructor(
    private readonly ctx: WorkflowContext,
    private readonly p: Prepared,
    private readonly sw: SwarmRuntime,
  ) {
    this.wf = p.t.task_id;
    this.grace = sw.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  }

  async run(reroute: Workflow): Promise<WorkflowResult> {
    const { ctx } = this;
    try {
      let st = await ctx.step('swarm-plan', () => this.plan());
      st = await ctx.step('swarm-act-0', () => this.act(st, [], 0));
      for (let k = 1; st.agents.some((a) => a.status === 'running'); k++) {
        const cur = st;
        // One step per decision: the mail read (every item available, its events emitted) and acted on, journaled once.
        // Cut off by a crash, it runs again from the position `cur` recorded (the same mail first, perhaps more after it).
        // A decision that changed nothing (an idle tick) journals a marker, not the whole state again.
        const next = await ctx.step(`swarm-act-${k}`, async (): Promise<LeadState | { same: true }> => {
          const batch = await this.inbox(cur);
          const s = await this.act(cur, batch.mails, k, batch.last);
          return JSON.stringify(s) === JSON.stringify(cur) ? { same: true } : s;
        });
        st = 'same' in next ? cur : next;
      }
      // The lead has left its loop: a person's message is no longer taken (the route answers 404).
      await ctx.step('swarm-close', async () => {
        await this.sw.board.update(this.wf, (cur) => ({
          ...cur!,
          status: cur?.status === 'ended' ? 'ended' : 'synthesizing',
          updated_at: new Date().toISOString(),
        }));
        return true;
      });
      if (!st.agents.some((a) => a.status === 'done')) {
        // The whole swarm failed (every agent failed, or a swarm limit stopped it before any finished): the task
        // is routed again without force_swarm. Not after one of the task's budgets: they bind the re-route too.
        if (st.stop?.budget) {
          await ctx.step('swarm-end', () => this.end());
          throw this.failure(st, Code.ResourceExhausted, `swarm stopped before any agent finished: ${st.stop.reason}`);
        }
        return await this.reroute(st, reroute);
      }
      return await this.synthesize(st);
    } catch (err) {
      // The task ends here (cancel, timeout, a failure the worker does not retry): the swarm is over, so
      // its agents stop (the board says ended) and its queues go now. Not on a hand-back, a lost lease,
      // a wait or a retryable failure: the next activation continues from them.
      if (endsTask(err, ctx.signal)) await this.end().catch(() => undefined);
      throw err;
    } finally {
      this.reader?.close();
    }
  }

  /** PROGRESS (planning), the model's task list (or the request's parts), LEAD_DECISION, the list in KV, TASKLIST_UPDATED. */
  private async plan(): Promise<LeadState> {
    const { ctx, p, sw } = this;
    const startedAt = Date.now();
    ctx.emit('PROGRESS', SWARM_SUPERVISOR, 'Planning the swarm', { stage: 'planning' });
    const turn = await modelTurn(
      quiet(ctx),
      p.agent,
      { ...p.base, agentId: SWARM_LEAD },
      'swarm-plan',
      [{ role: 'system', content: swarmPlanPrompt(p.tools, sw.limits.max_agents) }, ...p.past, p.user],
      undefined,
      { emitOutput: false, inStep: true },
    );
    const { tasks, fromModel } = parsePlan(turn.text, p.t.query, sw.limits.max_agents);
    ctx.emit('LEAD_DECISION', SWARM_LEAD, `Planned ${tasks.length} task${tasks.length === 1 ? '' : 's'}`, {
      decision: 'plan',
      reason: fromModel ? 'the model planned the tasks' : 'the model gave no task list: one task per part of the request',
      tasks: tasks.map((t) => ({ id: t.id, description: t.description })),
    });
    await sw.board.update(this.wf, () => ({
      workflow_id: this.wf,
      owner: { user_id: p.t.user_id ?? '', tenant_id: p.t.tenant_id ?? '' },
      status: 'running',
      tasks,
      updated_at: new Date().toISOString(),
    }));
    ctx.emit('TASKLIST_UPDATED', SWARM_LEAD, `Task list: ${tasks.length} tasks`, { tasks });
    return { startedAt, cursor: 0, next: 0, tasks, agents: [], lead: [callOf(SWARM_LEAD, 'swarm-plan', turn)], notes: [] };
  }

  /** Waits for mail (until the wall clock, or the stop's grace, runs out); emits the agents' events. */
  private async inbox(st: LeadState): Promise<{ mails: Received[]; last: number }> {
    const { ctx, sw } = this;
    this.reader ??= await sw.mail.reader(this.wf, LEAD, st.cursor);
    const until = st.stop ? st.stop.at + this.grace : st.startedAt + sw.limits.max_wall_clock_minutes * 60_000;
    // An idle swarm still decides every IDLE_TICK_MS (an empty batch): a pause or a limit is applied without waiting for mail.
    await this.reader.wait(Math.min(until - Date.now(), IDLE_TICK_MS), ctx.signal);
    ctx.checkpoint();
    const mails = this.reader.take(MAX_BATCH).filter((m) => m.seq > st.cursor);
    for (const m of mails) if (m.kind === 'event') ctx.emit(m.event.type, m.from, m.event.message, m.event.payload);
    return { mails, last: mails.reduce((n, m) => Math.max(n, m.seq), st.cursor) };
  }

  /** One decision: the mail's effects, the limits, recruits; the new state (journaled whole). */
  private async act(prev: LeadState, mails: Received[], k: number, last = prev.cursor): Promise<LeadState> {
    const { ctx, p, sw } = this;
    const L = sw.limits;
    const s = structuredClone(prev);
    s.cursor = last;
    let tasksChanged = false;
    let teamChanged = false;
    const people: (Received & { kind: 'person' })[] = [];
    const results: WorkspaceEntry[] = [];
    const agent = (name: string) => s.agents.find((a) => a.name === name);
    for (const m of mails) {
      if (m.kind === 'event') {
        const a = agent(m.from);
        const pl = m.event.payload ?? {};
        if (a && m.event.type === 'PROGRESS' && typeof pl.llm_calls === 'number' && typeof pl.total_tokens === 'number') {
          a.calls = Math.max(a.calls, pl.llm_calls);
          a.tokens = Math.max(a.tokens, pl.total_tokens);
          if (typeof pl.cost_usd === 'number') a.cost = Math.max(a.cost ?? 0, pl.cost_usd);
        }
      } else if (m.kind === 'result') {
        const a = agent(m.from);
        if (!a || a.status !== 'running') continue;
        this.retire(s, a, m.report.success ? 'done' : 'failed', m.report.error ?? '', m.report);
        tasksChanged = teamChanged = true;
        if (m.report.success) {
          results.push({ agent: a.name, task_id: a.task, text: workspaceSnippet(m.report.text, L.workspace_snippet_chars), at: new Date().toISOString() });
        }
      } else if (m.kind === 'text') {
        s.notes.push(`${m.from}: ${m.text.slice(0, MAX_NOTE_CHARS)}`);
      } else if (m.kind === 'person') {
        people.push(m);
      }
    }
    // The batch's results in the shared workspace (one write), before any agent recruited below reads it.
    await sw.board.post(this.wf, ...results);
    for (const [j, m] of people.entries()) {
      if (s.stop) {
        ctx.emit('LEAD_DECISION', SWARM_LEAD, `Message not acted on: the swarm is stopping`, {
          decision: 'message_ignored',
          message: m.text,
          message_id: m.id,
          reason: s.stop.reason,
        });
        continue;
      }
      const step = `swarm-act-${k}-person-${j + 1}`;
      const turn = await modelTurn(
        quiet(ctx),
        p.agent,
        { ...p.base, agentId: SWARM_LEAD },
        step,
        [
          { role: 'system', content: personMessageSystem },
          { role: 'user', content: personMessageInput(p.t.query, s.tasks, m.text) },
        ],
        undefined,
        { emitOutput: false, inStep: true },
      );
      s.lead.push(callOf(SWARM_LEAD, step, turn));
      const { tasks, fromModel } = tasksForMessage(turn.text, m.text, s.tasks.length);
      s.tasks.push(...tasks);
      ctx.emit('LEAD_DECISION', SWARM_LEAD, `A person's message: ${tasks.length ? `added ${tasks.map((t) => t.id).join(', ')}` : 'no new task'}`, {
        decision: 'person_message',
        message: m.text,
        message_id: m.id,
        added: tasks.map((t) => ({ id: t.id, description: t.description })),
        reason: fromModel ? `the model planned ${tasks.length} task(s) for the message` : 'the model gave no task list: the message becomes a task',
      });
      if (tasks.length) tasksChanged = true;
    }
    const now = Date.now();
    if (!s.stop) {
      // The swarm limits, then the task's budgets over every agent's calls (agents report them with each turn).
      const hit = limitReached(s, L, now) ?? budgetReached(s, p.deps.budgets, p.history.summaryCall ? [p.history.summaryCall.usage] : []);
      if (hit) {
        s.stop = { ...hit, at: now };
        const running = s.agents.filter((a) => a.status === 'running');
        ctx.emit('LEAD_DECISION', SWARM_LEAD, `Stopping the swarm: ${hit.reason}`, {
          decision: 'stop',
          limit: hit.limit,
          reason: hit.reason,
          agents: running.map((a) => a.name),
        });
        await Promise.all(
          running.map((a) =>
            sw.mail.send(this.wf, a.name, { kind: 'stop', from: LEAD, reason: hit.reason }, `${this.wf}:${LEAD}:swarm-act-${k}:stop:${a.name}`),
          ),
        );
        for (const t of s.tasks) {
          if (t.status !== 'pending') continue;
          t.status = 'blocked';
          t.note = `not started: ${hit.reason}`;
          tasksChanged = true;
        }
      }
    }
    /** The task list in KV is s.tasks already (the recruits wrote it, and nothing changes it after them). */
    let written = false;
    if (!s.stop) {
      const recruited = await this.recruit(s);
      if (recruited.changed) tasksChanged = true;
      if (recruited.fresh) teamChanged = written = true;
    } else if (now >= s.stop.at + this.grace) {
      for (const a of s.agents.filter((x) => x.status === 'running')) {
        this.retire(s, a, 'failed', `did not report within ${Math.round(this.grace / 1000)} s of being stopped`);
        tasksChanged = teamChanged = true;
      }
    }
    if (tasksChanged) {
      if (!written) await sw.board.update(this.wf, (cur) => ({ ...cur!, tasks: s.tasks, updated_at: new Date().toISOString() }));
      ctx.emit('TASKLIST_UPDATED', SWARM_LEAD, `Task list: ${s.tasks.filter((t) => t.status === 'done').length} of ${s.tasks.length} done`, { tasks: s.tasks });
    }
    if (teamChanged) this.teamStatus(s);
    return s;
  }

  /** Retires an agent (its task done or failed): TEAM_RETIRED, LEAD_DECISION. */
  private retire(s: LeadState, a: AgentRec, status: 'done' | 'failed', error: string, report?: AgentRec['report']): void {
    a.status = status;
    if (report) {
      a.report = report;
      a.calls = report.calls.length;
      a.tokens = report.calls.reduce((n, c) => n + c.usage.totalTokens, 0);
      a.cost = report.calls.reduce((n, c) => n + c.usage.costUsd, 0);
    }
    if (error) a.note = error;
    const task = s.tasks.find((t) => t.id === a.task);
    if (task) {
      task.status = status;
      if (error) task.note = error;
    }
    this.ctx.emit('LEAD_DECISION', SWARM_LEAD, `Retire ${a.name}`, {
      decision: 'retire',
      agent_id: a.name,
      task_id: a.task,
      reason: status === 'done' ? 'its task is done' : `it failed: ${error}`,
    });
    this.ctx.emit('TEAM_RETIRED', SWARM_LEAD, `${a.name} retired`, { agent_id: a.name, task_id: a.task, success: status === 'done' });
  }

  /** One agent per pending task while max_agents allows (the list in KV first, so agents see their team); the rest blocked. */
  private async recruit(s: LeadState): Promise<{ changed: boolean; fresh: number }> {
    const { ctx, sw } = this;
    const L = sw.limits;
    const fresh: { name: string; task: SwarmTask }[] = [];
    const blocked: SwarmTask[] = [];
    for (const t of s.tasks) {
      if (t.status !== 'pending') continue;
      if (s.agents.length >= L.max_agents) {
        t.status = 'blocked';
        t.note = `max_agents (${L.max_agents}) reached`;
        blocked.push(t);
        continue;
      }
      const name = `agent-${++s.next}`;
      s.agents.push({ name, task: t.id, status: 'running', calls: 0, tokens: 0 });
      t.status = 'assigned';
      t.agent = name;
      fresh.push({ name, task: t });
    }
    if (blocked.length) {
      ctx.emit('LEAD_DECISION', SWARM_LEAD, `${blocked.length} task(s) not assigned: max_agents (${L.max_agents}) reached`, {
        decision: 'blocked',
        tasks: blocked.map((t) => t.id),
        reason: `max_agents (${L.max_agents}) reached`,
      });
    }
    if (!fresh.length) return { changed: blocked.length > 0, fresh: 0 };
    await sw.board.update(this.wf, (cur) => ({ ...cur!, tasks: s.tasks, updated_at: new Date().toISOString() }));
    const team = s.agents.map((a) => a.name);
    await Promise.all(fresh.map((f) => recruitAgent(sw.publisher, this.startOf(f.name, f.task, team))));
    ctx.emit('LEAD_DECISION', SWARM_LEAD, `Recruit ${fresh.map((f) => f.name).join(', ')}`, {
      decision: 'recruit',
      agents: fresh.map((f) => ({ agent_id: f.name, task_id: f.task.id })),
      reason: `${fresh.length} task(s) without an agent`,
    });
    ctx.emit('TEAM_RECRUITED', SWARM_LEAD, `Recruited ${fresh.length} agent(s)`, {
      agents: fresh.map((f) => ({ agent_id: f.name, task_id: f.task.id, description: f.task.description })),
      total_agents: s.agents.length,
    });
    return { changed: true, fresh: fresh.length };
  }

  private teamStatus(s: LeadState): void {
    const count = (st: AgentRec['status']) => s.agents.filter((a) => a.status === st).length;
    const [running, done, failed] = [count('running'), count('done'), count('failed')];
    this.ctx.emit('TEAM_STATUS', SWARM_LEAD, `${running} running, ${done} done, ${failed} failed`, {
      running,
      done,
      failed,
      total_agents: s.agents.length,
      agents: s.agents.map((a) => ({ agent_id: a.name, task_id: a.task, status: a.status })),
    });
  }

  private startOf(name: string, task: SwarmTask, team: string[]): AgentStart {
    const { p, sw } = this;
    const L = sw.limits;
    const agentTimeout = p.deps.agentTimeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS;
    return {
      workflow_id: this.wf,
      name,
      task: { id: task.id, description: task.description },
      query: p.t.query,
      system: p.sys.content,
      team,
      spec: {
        tier: p.base.tier,
        ...(p.base.model ? { model: p.base.model } : {}),
        ...(p.base.provider ? { provider: p.base.provider } : {}),
        maxIterations: p.t.max_iterations ? Math.min(p.t.max_iterations, L.max_iterations_per_agent) : L.max_iterations_per_agent,
        ...(p.base.sessionId ? { sessionId: p.base.sessionId } : {}),
        ...(p.base.userId ? { userId: p.base.userId } : {}),
        // An agent runs outside the workflow actor and cannot wait for a person: a tool a policy holds is not offered to it.
        tools: p.tools.filter((n) => !needsApproval(p.deps.approvals?.policies, p.role.name, n)),
        ...(p.base.allowDangerous ? { allowDangerous: true } : {}),
      },
      limits: {
        maxMessages: L.max_messages_per_agent,
        timeoutMs: Math.min(agentTimeout, L.agent_timeout_seconds * 1000),
        timeoutSetting: L.agent_timeout_seconds * 1000 < agentTimeout ? "the swarm's agent_timeout_seconds" : 'AGENT_TIMEOUT_SECONDS',
        snippetChars: L.workspace_snippet_chars,
        maxEntries: L.workspace_max_entries,
      },
      settings: { maxTokens: p.agent.maxTokens, temperature: p.agent.temperature, ...(p.agent.sampling ? { sampling: p.agent.sampling } : {}) },
    };
  }

  /**
   * The swarm ended: its task list marked so (no more messages; agents running or still queued see
   * it before their next turn and stop), its mailboxes, queued agent starts and workspace removed.
   */
  private async end(): Promise<void> {
    const { sw } = this;
    await sw.board.update(this.wf, (cur) => ({ ...cur!, status: 'ended', updated_at: new Date().toISOString() }));
    await Promise.all([sw.mail.purge(this.wf), sw.board.clearWorkspace(this.wf)]);
  }

  /** PROGRESS (synthesizing) and the answer: a model call, or without one when a calls or tokens limit stopped the swarm. */
  private async synthesize(st: LeadState): Promise<WorkflowResult> {
    const { ctx, p } = this;
    const results = st.agents
      .filter((a) => a.status === 'done' && a.report)
      .map((a) => ({ agent: a.name, task: st.tasks.find((t) => t.id === a.task)?.description ?? a.task, text: a.report!.text }));
    const noModel = st.stop && st.stop.limit !== 'max_wall_clock_minutes';
    const synth = await ctx.step('swarm-synthesize', async () => {
      ctx.emit('PROGRESS', SWARM_SUPERVISOR, 'Synthesizing the agents\u2019 results', { stage: 'synthesizing', results: results.length });
      if (noModel) {
        const text = `${results.map((r) => `${r.agent} (${r.task}): ${r.text}`).join('\n\n')}\n\n(The swarm stopped early: ${st.stop!.reason}.)`;
        return {
          text,
          model: results.length ? (st.agents.find((a) => a.report?.calls.length)?.report?.calls.at(-1)?.model ?? '') : '',
          provider: '',
          call: undefined,
        };
      }
      const turn = await modelTurn(
        ctx,
        p.agent,
        { ...p.base, agentId: SWARM_SUPERVISOR, finalAnswer: true },
        'swarm-synthesize',
        [p.sys, ...p.past, { role: 'user', content: synthesisPrompt(p.t.query, results, st.notes) }],
        undefined,
        { emitOutput: false, inStep: true },
      );
      return { text: turn.text, model: turn.model, provider: turn.provider, call: callOf(SWARM_SUPERVISOR, 'swarm-synthesize', turn) };
    });
    await ctx.step('swarm-end', () => this.end());
    const outputs = swarmOutputs(st);
    if (synth.call)
      outputs.push({ text: synth.text, model: synth.model, provider: synth.provider, usage: synth.call.usage, calls: [synth.call], toolCalls: 0 });
    const tokens = outputs.reduce((n, o) => n + o.calls.reduce((m, c) => m + c.usage.totalTokens, 0), 0);
    return {
      final: { text: synth.text, model: synth.model, provider: synth.provider },
      outputs,
      agentsUsed: st.agents.length,
      metadata: {
        workflow_type: 'swarm',
        total_agents: st.agents.length,
        total_tokens: tokens,
        tasks: st.tasks,
        ...(st.stop ? { stop_reason: st.stop.limit } : {}),
      },
    };
  }

  /** Every agent failed (or a swarm limit stopped them all): LEAD_DECISION (reroute), the swarm ended, the task run by normal routing here. */
  private async reroute(st: LeadState, reroute: Workflow): Promise<WorkflowResult> {
    const { ctx, p } = this;
    const failures = st.agents.map((a) => `${a.name}: ${a.note ?? 'failed'}`);
    const why = st.stop
      ? `the swarm stopped before any agent finished: ${st.stop.reason} (${failures.join('; ')})`
      : `every agent failed (${failures.join('; ')})`;
    await ctx.step('swarm-reroute', async () => {
      ctx.emit('LEAD_DECISION', SWARM_LEAD, `${st.stop ? 'No agent finished' : 'Every agent failed'}: routing the task again without force_swarm`, {
        decision: 'reroute',
        reason: why,
      });
      await this.end();
      return true;
    });
    const outputs = swarmOutputs(st);
    try {
      const r = await reroute(ctx, p);
      const all = [...outputs, ...r.outputs];
      return {
        ...r,
        outputs: all,
        metadata: {
          ...r.metadata,
          workflow_type: 'swarm',
          rerouted: true,
          total_agents: st.agents.length,
          total_tokens: all.reduce((n, o) => n + o.calls.reduce((m, c) => m + c.usage.totalTokens, 0), 0),
          swarm_failures: failures,
          ...(st.stop ? { stop_reason: st.stop.limit } : {}),
        },
      };
    } catch (err) {
      // A cancel, a wait for a person, a retryable failure: not the re-route's verdict.
      if (ctx.signal.aborted || !(err instanceof AppError) || err.retryable) throw err;
      throw this.failure(st, Code.Aborted, `swarm failed: ${why}; the task routed again without force_swarm failed too: ${err.message}`);
    }
  }

  /** The swarm's failure with its metadata (its calls recorded as usage, their cost in metadata.cost_usd). */
  private failure(st: LeadState, code: Code, message: string): SwarmFailed {
    const { p } = this;
    const calls = swarmOutputs(st).flatMap((o) => o.calls);
    if (p.deps.usage) for (const c of calls) if (!p.recordedHere.has(c.step)) p.deps.usage.recordModelCall(recordOf(p.t, c));
    const usage = sumUsage(calls.map((c) => c.usage));
    return new SwarmFailed(code, message, {
      workflow_type: 'swarm',
      total_agents: st.agents.length,
      total_tokens: usage.totalTokens,
      model_breakdown: breakdown(calls),
      cost_usd: usage.costUsd,
      tasks: st.tasks,
      ...(st.stop ? { stop_reason: st.stop.limit } : {}),
    });
  }
}
