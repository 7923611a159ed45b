/**
 * The crash tests of the swarm, two worker processes on one nats-server and one database:
 * 1. the worker running a swarm's lead and its three agents is killed (SIGKILL) while every
 *    agent's second model turn is under way; a fresh worker (started beside it before the kill)
 *    takes the lead and the agents over from their journals and mailboxes;
 * 2. two workers share a swarm (the lead on one, the agents wherever the work queue put them,
 *    read from the LEASES bucket); the one running agents but not the lead is killed (the lead's
 *    when every agent runs there) while the second turns are under way (a slow model, 15 s);
 *    the other re-activates the killed agents while the lead and the spared agents carry on.
 *
 * The model is a local OpenAI-compatible server whose answer depends only on the conversation
 * so far, so both workers see the same script:
 *   lead: a plan of three tasks; agents: turn 1 sends two messages (one to the next agent, one
 *   to the lead), then each turn calls the calculator until the message from the previous
 *   agent has arrived, then answers with it; the lead's synthesis answers "swarm done".
 * In test 1 every agent's second turn is held (never answered) until the kill cuts it off; in
 * test 2 it takes 15 s, so the kill cuts off those of the killed worker's agents only.
 *
 * Checked: the task completes; AGENT_STARTED, AGENT_COMPLETED and TEAM_RETIRED once per agent;
 * no model call whose turn was journaled before the kill (read from the journals at the kill)
 * was made again, a cut-off one at most once more; every agent-to-agent message reached its
 * agent exactly once (one user message in its conversation) and every message to the lead and
 * every result reached the synthesis exactly once; the task list ends with each task done once;
 * the events' seq are 1..N.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BUCKETS, JournalLog, kvKeys } from '../src/bus/index.js';
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
/**
 * How an agent's second turn is answered now: `hang` never (the kill lands there), `slow` after
 * 15 s (a kill lands there; the agents the kill spares finish it), `answer` at once.
 */
let secondTurn: 'hang' | 'slow' | 'answer' = 'hang';

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
/** The requests of the swarm working on `query` (every prompt of its lead and agents carries it). */
const requestsOf = (query: string) => llm.requests.filter((r) => messagesOf(r).some((m) => text(m).includes(query)));

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
    if (turn === 2 && secondTurn === 'hang') return { type: 'hang' };
    const delayMs = turn === 2 && secondTurn === 'slow' ? 15_000 : 100;
    const got = messagesOf(r)
      .filter((m) => m.role === 'user' && text(m).startsWith('Message from '))
      .map(text);
    if (got.some((m) => m.includes(token(prevOf(name), name)))) {
      return { type: 'completion', content: `result of ${name}: ${got.join(' | ')}`, delayMs };
    }
    return {
      type: 'completion',
      content: 'Waiting for my teammate.',
      toolCalls: [{ id: `${name}-c${turn}`, name: 'calculator', arguments: JSON.stringify({ expression: '1+1' }) }],
      delayMs,
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

/** The process (pid) holding the lease of the swarm's lead and of each agent. */
async function leaseHolders(wf: string): Promise<{ lead?: number; agents: Map<string, number | undefined> }> {
  const nc = await connect({ servers: t.natsUrl });
  try {
    const kv = await new Kvm(nc).open(BUCKETS.leases);
    const pid = async (key: string) => {
      const e = await kv.get(key);
      return e && e.operation === 'PUT' && e.value.length ? Number(e.string().split('-')[0]) : undefined;
    };
    const agents = new Map<string, number | undefined>();
    for (const a of AGENTS) agents.set(a, await pid(kvKeys.agentLease(wf, a)));
    return { lead: await pid(kvKeys.lease(wf)), agents };
  } finally {
    await nc.close();
  }
}

async function submit(query: string): Promise<string> {
  const r = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, mode: 'standard', context: { force_swarm: true, role: 'generalist' } }),
  });
  expect(r.ok).toBe(true);
  return (await json(r)).task_id as string;
}

/** Resolves when every agent of the swarm on `query` has its second turn under way. */
async function secondTurnsUnderWay(query: string): Promise<void> {
  const held = () =>
    new Set(
      requestsOf(query)
        .filter((q) => agentOf(q) && turnOf(q) === 2)
        .map((q) => agentOf(q)),
    );
  await waitFor(async () => (held().size === AGENTS.length ? true : undefined), 60_000, 20);
}

/**
 * After the kill: the task completes, and every check of the file's header holds. `cutOff`: the
 * agents whose second turn the kill cut off (made twice in all); the others' made once.
 */
async function checkSwarm(id: string, query: string, atKill: Awaited<ReturnType<typeof journaled>>, cutOff: string[]): Promise<void> {
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
  const reqs = requestsOf(query);
  expect(reqs.filter(isPlan)).toHaveLength(1);
  const synth = reqs.filter(isSynthesis);
  expect(synth).toHaveLength(1);
  const perTurn = new Map<string, number>();
  for (const q of reqs) {
    const a = agentOf(q);
    if (a) perTurn.set(`${a}-turn-${turnOf(q)}`, (perTurn.get(`${a}-turn-${turnOf(q)}`) ?? 0) + 1);
  }
  for (const a of AGENTS) {
    for (const step of atKill.agents.get(a)!) {
      const m = /^swarm-(agent-\d+-turn-\d+)$/.exec(step);
      if (m) expect(perTurn.get(m[1]!), `${step} was journaled before the kill`).toBe(1);
    }
    // A second turn the kill cut off was made once more; one it spared, once.
    expect(perTurn.get(`${a}-turn-2`), `${a}-turn-2`).toBe(cutOff.includes(a) ? 2 : 1);
  }
  for (const [k, n] of perTurn) expect(n, k).toBeLessThanOrEqual(2);

  // Mailboxes: each agent-to-agent message in its receiver's final conversation once; each note and result in the synthesis once.
  for (const a of AGENTS) {
    const last = reqs.filter((q) => agentOf(q) === a).at(-1)!;
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
  const query = 'Work on alpha, beta and gamma together.';
  secondTurn = 'hang';
  const w1 = await worker();
  const id = await submit(query);
  // Every agent's second turn is under way (held) on the first worker; its first turn and both sends are journaled.
  await secondTurnsUnderWay(query);
  // A second worker joins, then the first is killed: the second takes the lead and every agent over.
  const w2 = await worker();
  w1.kill('SIGKILL');
  await w1.exited;
  secondTurn = 'answer';
  await checkSwarm(id, query, await journaled(id), AGENTS);
  w2.kill('SIGTERM');
  await w2.exited;
}, 240_000);

it('of two workers sharing a swarm, the one running agents (not the lead, when they are split) is killed mid-turn: the other finishes it', async () => {
  const query = 'Work on alpha, beta and gamma, split across two workers.';
  secondTurn = 'slow';
  const [w1, w2] = await Promise.all([worker(), worker()]);
  const id = await submit(query);
  await secondTurnsUnderWay(query);
  const holders = await leaseHolders(id);
  const byPid = (p: ServiceProcess) => AGENTS.filter((a) => holders.agents.get(a) === p.proc.pid);
  // The victim: a worker running agents but not the lead if there is one (the lead carries on elsewhere), else the lead's.
  const victim = [w1, w2].find((p) => p.proc.pid !== holders.lead && byPid(p).length) ?? [w1, w2].find((p) => p.proc.pid === holders.lead)!;
  const cutOff = byPid(victim);
  expect(cutOff.length, JSON.stringify({ holders: [...holders.agents], lead: holders.lead })).toBeGreaterThan(0);
  victim.kill('SIGKILL');
  await victim.exited;
  const atKill = await journaled(id);
  secondTurn = 'answer';
  await checkSwarm(id, query, atKill, cutOff);
  const survivor = victim === w1 ? w2 : w1;
  survivor.kill('SIGTERM');
  await survivor.exited;
}, 240_000);
