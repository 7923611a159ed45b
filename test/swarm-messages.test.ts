/**
 * Swarm messaging with a scripted model: agents message each other and the lead through their
 * mailboxes (send_message, max_messages_per_agent), a person's message changes the lead's plan
 * (a new task and agent), and an agent recruited later sees the shared workspace
 * (workspace_max_entries, workspace_snippet_chars). The swarm's mailboxes are purged at its end;
 * a tool a tool policy holds for a person is not offered to swarm agents.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { STREAMS } from '../src/bus/index.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { startOpenAiServer, scriptedProvider, type OpenAiTestServer } from './helpers/openai-server.js';
import {
  agentOf,
  toolsOf,
  eventsOf,
  finished,
  postMessage,
  submitSwarm,
  swarmConfig,
  swarmModel,
  text,
  toolCall,
  turnOf,
  untilEvent,
  usersOf,
} from './helpers/swarm.js';

let llm: OpenAiTestServer;
let t: TestApp;

beforeAll(async () => {
  llm = await startOpenAiServer();
  // A tool policy holds the calculator for a person: swarm agents (which cannot wait for one) are not offered it.
  const cfg = swarmConfig(
    { max_agents: 4, max_messages_per_agent: 2, workspace_snippet_chars: 20, workspace_max_entries: 1 },
    'approvals:\n  tools: [calculator]\n',
  );
  t = await startTestApp({ CONFIG_PATH: cfg, MAX_TOKENS_PER_REQUEST: '0', MAX_COST_PER_REQUEST: '0' }, { llm: scriptedProvider(llm) });
});
afterAll(async () => {
  await t?.stop();
  await llm?.close();
});
beforeEach(() => llm.reset());

const peer = (a: string) => `agent-${(Number(a.split('-')[1]) % 3) + 1}`;

describe('swarm messages', () => {
  it('3 agents message each other and the lead; a third message is refused by max_messages_per_agent; the mailboxes are purged', async () => {
    llm.setDefault(
      swarmModel({
        plan: ['Survey the Rhine', 'Survey the Danube', 'Survey the Elbe'],
        agent: (a, turn) => {
          if (turn === 1) return toolCall(`c1-${a}`, 'send_message', { to: peer(a), text: `hello from ${a} to ${peer(a)}` });
          if (turn === 2) return toolCall(`c2-${a}`, 'send_message', { to: 'lead', text: `note from ${a}` }, { delayMs: 700 });
          if (turn === 3) return toolCall(`c3-${a}`, 'send_message', { to: peer(a), text: 'one too many' });
          return text(`${a} final`);
        },
      }),
    );
    const id = await submitSwarm(t.base, 'Survey three rivers.');
    const s = await finished(t.base, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.result).toBe('swarm answer');
    expect(s.metadata).toMatchObject({ workflow_type: 'swarm', total_agents: 3 });
    for (const a of ['agent-1', 'agent-2', 'agent-3']) {
      const from = `agent-${((Number(a.split('-')[1]) + 1) % 3) + 1}`;
      const mine = llm.requests.filter((r) => agentOf(r) === a);
      // Each agent received its peer's message as a user message of a later turn.
      expect(
        mine.some((r) => usersOf(r).includes(`Message from ${from}: hello from ${from} to ${a}`)),
        a,
      ).toBe(true);
      expect(toolsOf(mine[0]!)).toContain('send_message');
      expect(toolsOf(mine[0]!)).toContain('web_search');
      expect(toolsOf(mine[0]!)).not.toContain('calculator');
      // The third send was refused: the model read why.
      const last = mine.find((r) => turnOf(r) === 4)!;
      const tool = (last.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));
      expect(tool.at(-1)).toMatch(/message not sent: this agent has sent 2 messages, the swarm's max_messages_per_agent \(2\)/);
    }
    const synth = llm.requests.find((r) => usersOf(r).some((u) => u.startsWith('Combine the results')))!;
    const prompt = usersOf(synth).at(-1)!;
    for (const a of ['agent-1', 'agent-2', 'agent-3']) {
      expect(prompt).toContain(`${a}: note from ${a}`);
      expect(prompt).toContain(`${a} final`);
    }
    const evs = await eventsOf(t.base, id);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    // Every agent iterated 4 times, each iteration reported once.
    for (const a of ['agent-1', 'agent-2', 'agent-3']) {
      expect(evs.filter((e) => e.agent_id === a && e.type === 'PROGRESS').map((e) => e.payload.iteration)).toEqual([1, 2, 3, 4]);
    }
    // The swarm's mailboxes are gone.
    const nc = await connect({ servers: t.natsUrl });
    try {
      const jsm = await jetstreamManager(nc);
      const info = await jsm.streams.info(STREAMS.mailboxes, { subjects_filter: `svc.actor.agent.${id}.*` });
      expect(info.state.subjects ?? {}).toEqual({});
    } finally {
      await nc.close();
    }
  });

  it("a person's message adds a task with an agent of its own, which is shown the last workspace entries, cut", async () => {
    llm.setDefault(
      swarmModel({
        plan: ['Survey the Rhine', 'Survey the Danube', 'Survey the Oder'],
        agent: (a) =>
          a === 'agent-3'
            ? text('agent-3 slow result', { delayMs: 2500 })
            : text(`${a} result: a finding longer than twenty characters`, { delayMs: a === 'agent-2' ? 300 : 0 }),
      }),
    );
    const id = await submitSwarm(t.base, 'Survey rivers.');
    await untilEvent(t.base, id, (e) => e.type === 'TEAM_RETIRED' && e.payload?.agent_id === 'agent-2');
    await untilEvent(t.base, id, (e) => e.type === 'TEAM_RETIRED' && e.payload?.agent_id === 'agent-1');
    const sent = await postMessage(t.base, id, { message: 'Also compare the Elbe' });
    expect(sent).toEqual({ status: 200, body: { success: true, status: 'delivered' } });
    const s = await finished(t.base, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.metadata.total_agents).toBe(4);
    const evs = await eventsOf(t.base, id);
    const decision = evs.find((e) => e.type === 'LEAD_DECISION' && e.payload?.decision === 'person_message')!;
    expect(decision.agent_id).toBe('swarm-lead');
    expect(decision.payload).toMatchObject({ message: 'Also compare the Elbe', added: [{ id: 't4', description: 'Also compare the Elbe' }] });
    const list = evs.slice(evs.indexOf(decision)).find((e) => e.type === 'TASKLIST_UPDATED')!;
    expect(list.payload.tasks.at(-1)).toMatchObject({ id: 't4', description: 'Also compare the Elbe', source: 'person', agent: 'agent-4' });
    // The lead asked its model about the message, with the task list.
    const asked = llm.requests.find((r) => usersOf(r).some((u) => u.startsWith('Message: Also compare the Elbe')))!;
    expect(usersOf(asked)[0]).toContain('t1 (done)');
    // agent-4 saw one workspace entry (the last posted: agent-2 answered after agent-1), cut to 20 characters.
    const first = llm.requests.find((r) => agentOf(r) === 'agent-4')!;
    const shown = usersOf(first)[0]!.split('Shared workspace (latest results):\n')[1]!.split('\n\n')[0]!;
    expect(shown).toBe('- agent-2 (t2): agent-2 result: a fi…');
    expect(usersOf(first)[0]).toContain('Your task (t4): Also compare the Elbe');
  });
});
