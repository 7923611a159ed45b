/**
 * The crash test of the swarm: the worker process that runs a swarm's lead and its three agents
 * is killed (SIGKILL) while every agent's second model turn is under way; a fresh worker (started
 * beside it before the kill) takes the lead and the agents over from their journals and mailboxes.
 *
 * The model is a local OpenAI-compatible server whose answer depends only on the conversation
 * so far, so both workers see the same script:
 *   lead: a plan of three tasks; agents: turn 1 sends two messages (one to the next agent, one
 *   to the lead), then each turn calls the calculator until the message from the previous
 *   agent has arrived, then answers with it; the lead's synthesis answers "swarm done".
 * While the first worker lives, every agent's second turn is held (never answered); the kill
 * cuts them off.
 *
 * Checked: the task completes; AGENT_STARTED, AGENT_COMPLETED and TEAM_RETIRED once per agent;
 * no model call whose turn was journaled before the kill (read from the journals at the kill)
 * was made again, a cut-off one at most once more; every agent-to-agent message reached its
 * agent exactly once (one user message in its conversation) and every message to the lead and
 * every result reached the synthesis exactly once; the task list ends with each task done once;
 * the events' seq are 1..N.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { JournalLog } from '../src/bus/index.js';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, type RecordedRequest } from './helpers/openai-server.js';
import { scriptedModelEnv, startServiceProcess, testBusEnv, type ServiceProcess } from './helpers/process.js';

const AGENTS = ['agent-1', 'agent-2', 'agent-3'];
/** Each agent messages the next one (agent-3 the first). */
const peerOf = (name: string) => AGENTS[(AGENTS.indexOf(name) + 1) % AGENTS.length]!;
const prevOf = (name: string) => AGENTS[(AGENTS.indexOf(name) + AGENTS.length - 1) % AGENTS.length]!;
const token = (from: string, to: string) => `token ${from}->${to}`;

let t: TestApp;
let llm: OpenAiTestServer;
const procs: ServiceProcess[] = [];
/** While true, every agent's second turn is held (the kill lands there). */
let holding = true;

type Msg = { role: string; content: unknown };
const text = (m: Msg) => (typeof m.content === 'string' ? m.content : '');
const messagesOf = (r: RecordedRequest) => (r.messages ?? []) as Msg[];
/** The agent a request is for (its task prompt names it), or undefined (the lead). */
const agentOf = (r: RecordedRequest) => /^You are (agent-\d+), one agent of a swarm/m.exec(text(messagesOf(r)[1] ?? { role: '', content: '' }))?.[1];
/** The agent's turn a request is (1 + its assistant messages so far). */
const turnOf = (r: RecordedRequest) => 1 + messagesOf(r).filter((m) => m.role === 'assistant').length;
const isPlan = (r: RecordedRequest) => text(messagesOf(r)[0] ?? { role: '', content: '' }).startsWith('You lead a swarm');
const isSynthesis = (r: RecordedRequest) => text(messagesOf(r).at(-1) ?? { role: '', content: '' }).startsWith('Combine the results');
const count = (hay: string, needle: string) => hay.split(needle).length - 1;

beforeAll(async () => {
  llm = await startOpenAiServer();
  llm.setDefault((r) => {
    if (isPlan(r)) {
      return {
        type: 'completion',
        content: JSON.stringify([
          { id: 'alpha', description: 'Work on alpha' },
          { id: 'beta', description: 'Work on beta' },
          { id: 'gamma', description: 'Work on gamma' },
        ]),
      };
    }
    if (isSynthesis(r)) return { type: 'completion', content: 'swarm done' };
    const name = agentOf(r);
    if (!name) return { type: 'completion', content: 'unexpected request' };
    const turn = turnOf(r);
    if (turn === 1) {
      return {
        type: 'completion',
        content: 'Telling my teammate and the lead.',
        toolCalls: [
          { id: `${name}-m1`, name: 'send_message', arguments: JSON.stringify({ to: peerOf(name), text: token(name, peerOf(name)) }) },
          { id: `${name}-m2`, name: 'send_message', arguments: JSON.stringify({ to: 'lead', text: `note from ${name}` }) },
        ],
        delayMs: 100,
      };
    }
    if (turn === 2 && holding) return { type: 'hang' };
    const got = messagesOf(r)
      .filter((m) => m.role === 'user' && text(m).startsWith('Message from '))
      .map(text);
    if (got.some((m) => m.includes(token(prevOf(name), name)))) {
      return { type: 'completion', content: `result of ${name}: ${got.join(' | ')}`, delayMs: 100 };
    }
    return {
      type: 'completion',
      content: 'Waiting for my teammate.',
      toolCalls: [{ id: `${name}-c${turn}`, name: 'calculator', arguments: JSON.stringify({ expression: '1+1' }) }],
      delayMs: 200,
    };
  });
  t = await startTestApp({ ROLES: 'gateway,orchestrator,archiver', WORKER_ACK_WAIT_MS: '1500' });
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await t?.stop();
  await llm?.close();
});

async function worker(): Promise<ServiceProcess> {
  const p = await startServiceProcess({ ROLES: 'worker', ...testBusEnv(t.natsUrl), ...scriptedModelEnv(llm.baseUrl) });
  procs.push(p);
  return p;
}

/** The steps journaled so far by the lead and by each agent. */
async function journaled(wf: string): Promise<{ lead: Set<string>; agents: Map<string, Set<string>> }> {
  const nc = await connect({ servers: t.natsUrl });
  try {
    const journal = new JournalLog(jetstream(nc), await jetstreamManager(nc));
    const lead = new Set((await journal.read(wf)).keys());
    const agents = new Map<string, Set<string>>();
    for (const a of AGENTS) agents.set(a, new Set((await journal.read(wf, a)).keys()));
    return { lead, agents };
  } finally {
    await nc.close();
  }
}

it('the worker running a swarm is killed mid-turn: a fresh worker finishes it, every agent once, no journaled call or message repeated', async () => {
  const w1 = await worker();
  const r = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'Work on alpha, beta and gamma together.', mode: 'standard', context: { force_swarm: true, role: 'generalist' } }),
  });
  expect(r.ok).toBe(true);
  const { task_id: id } = await json(r);

  // Every agent's second turn is under way (held) on the first worker; its first turn and both sends are journaled.
  const held = () => new Set(llm.requests.filter((q) => agentOf(q) && turnOf(q) === 2).map((q) => agentOf(q)));
  await waitFor(async () => (held().size === AGENTS.length ? true : undefined), 60_000, 20);
  // A second worker joins, then the first is killed: the second takes the lead and every agent over.
  const w2 = await worker();
  w1.kill('SIGKILL');
  await w1.exited;
  holding = false;
  const atKill = await journaled(id);
  expect(atKill.lead.has('swarm-plan')).toBe(true);
  for (const a of AGENTS) expect([...atKill.agents.get(a)!], a).toContain(`swarm-${a}-turn-1`);

  const s = await waitFor(async () => {
    const x = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
    return /COMPLETED|FAILED|CANCELLED/.test(x.status) ? x : undefined;
  }, 120_000);
  expect(s.status, JSON.stringify(s)).toBe('TASK_STATUS_COMPLETED');
  expect(s.result).toBe('swarm done');
  expect(s.metadata.workflow_type).toBe('swarm');
  expect(s.metadata.total_agents).toBe(AGENTS.length);

  // Model calls: the plan and the synthesis once; per (agent, turn) once when journaled at the kill, at most twice otherwise.
  expect(llm.requests.filter(isPlan)).toHaveLength(1);
  const synth = llm.requests.filter(isSynthesis);
  expect(synth).toHaveLength(1);
  const perTurn = new Map<string, number>();
  for (const q of llm.requests) {
    const a = agentOf(q);
    if (a) perTurn.set(`${a}-turn-${turnOf(q)}`, (perTurn.get(`${a}-turn-${turnOf(q)}`) ?? 0) + 1);
  }
  for (const a of AGENTS) {
    for (const step of atKill.agents.get(a)!) {
      const m = /^swarm-(agent-\d+-turn-\d+)$/.exec(step);
      if (m) expect(perTurn.get(m[1]!), `${step} was journaled before the kill`).toBe(1);
    }
    // The held second turn was cut off by the kill and made once more.
    expect(perTurn.get(`${a}-turn-2`), `${a}-turn-2`).toBe(2);
  }
  for (const [k, n] of perTurn) expect(n, k).toBeLessThanOrEqual(2);

  // Mailboxes: each agent-to-agent message in its receiver's final conversation once; each note and result in the synthesis once.
  for (const a of AGENTS) {
    const last = llm.requests.filter((q) => agentOf(q) === a).at(-1)!;
    const convo = messagesOf(last)
      .filter((m) => m.role === 'user')
      .map(text)
      .join('\n');
    expect(count(convo, `Message from ${prevOf(a)}: ${token(prevOf(a), a)}`), a).toBe(1);
    expect(count(convo, 'Message from '), a).toBe(1);
  }
  const prompt = text(messagesOf(synth[0]!).at(-1)!);
  for (const a of AGENTS) {
    expect(count(prompt, `${a}: note from ${a}`), prompt).toBe(1);
    expect(count(prompt, `result of ${a}:`), prompt).toBe(1);
  }
  // The task list: each task done once, by its own agent.
  expect((s.metadata.tasks as { description: string; status: string; agent: string }[]).map((x) => [x.description, x.status, x.agent])).toEqual([
    ['Work on alpha', 'done', 'agent-1'],
    ['Work on beta', 'done', 'agent-2'],
    ['Work on gamma', 'done', 'agent-3'],
  ]);

  // Events: seq 1..N; every agent started, completed and was retired once.
  const { events } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 30_000 });
  const evs = events.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data) as { seq: number; type: string; agent_id: string; payload?: any });
  expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
  const of = (type: string) => evs.filter((e) => e.type === type);
  for (const a of AGENTS) {
    expect(
      of('AGENT_STARTED').filter((e) => e.agent_id === a),
      a,
    ).toHaveLength(1);
    expect(
      of('AGENT_COMPLETED').filter((e) => e.agent_id === a),
      a,
    ).toHaveLength(1);
    expect(
      of('TEAM_RETIRED').filter((e) => e.payload?.agent_id === a),
      a,
    ).toHaveLength(1);
  }
  expect(of('AGENT_COMPLETED')).toHaveLength(AGENTS.length);
  expect(of('WORKFLOW_COMPLETED')).toHaveLength(1);
  w2.kill('SIGTERM');
  await w2.exited;
}, 240_000);
