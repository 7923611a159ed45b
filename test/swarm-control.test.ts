/**
 * Cancel and pause reach every agent of a swarm, measured at the model: after a cancel no agent
 * calls the model again; while the task is paused no agent calls it, and after resume they go on.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { json, startTestApp, type TestApp } from './helpers/app.js';
import { startOpenAiServer, scriptedProvider, type OpenAiTestServer } from './helpers/openai-server.js';
import { agentOf, finished, postMessage, submitSwarm, swarmConfig, swarmModel, toolCall, untilEvent } from './helpers/swarm.js';

let llm: OpenAiTestServer;
let t: TestApp;

beforeAll(async () => {
  llm = await startOpenAiServer();
  t = await startTestApp(
    { CONFIG_PATH: swarmConfig({ max_iterations_per_agent: 6 }), MAX_TOKENS_PER_REQUEST: '0', MAX_COST_PER_REQUEST: '0', RATE_LIMIT_REQUESTS: '100000' },
    { llm: scriptedProvider(llm) },
  );
});
afterAll(async () => {
  await t?.stop();
  await llm?.close();
});
beforeEach(() => llm.reset());

const post = (path: string, body: unknown) =>
  fetch(`${t.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Agents that keep calling tools, 300 ms a model call; the times their calls arrived. */
function loopingAgents() {
  const seen: { agent: string; at: number }[] = [];
  llm.setDefault(
    swarmModel({
      plan: ['a', 'b'],
      agent: (a, turn) => {
        seen.push({ agent: a, at: Date.now() });
        return toolCall(`c${turn}-${a}`, 'send_message', { to: 'lead', text: `turn ${turn}` }, { delayMs: 300 });
      },
    }),
  );
  return seen;
}

describe('swarm control at the model', () => {
  it('cancel: no agent model call after the task is CANCELLED; the route answers 404', async () => {
    const seen = loopingAgents();
    const id = await submitSwarm(t.base, 'Two endless things.');
    await untilEvent(t.base, id, (e) => e.type === 'PROGRESS' && e.agent_id.startsWith('agent-') && e.payload?.iteration === 2);
    expect((await post(`/api/v1/tasks/${id}/cancel`, { reason: 'enough' })).status).toBe(200);
    const s = await finished(t.base, id);
    expect(s.status).toBe('TASK_STATUS_CANCELLED');
    const at = Date.now();
    await sleep(1500);
    expect(seen.filter((x) => x.at > at)).toEqual([]);
    expect((await postMessage(t.base, id, { message: 'still there?' })).status).toBe(404);
  }, 30_000);

  it('pause: no agent model call while the task is paused; after resume the agents finish', async () => {
    const seen = loopingAgents();
    const id = await submitSwarm(t.base, 'Two long things.');
    await untilEvent(t.base, id, (e) => e.type === 'PROGRESS' && e.agent_id.startsWith('agent-') && e.payload?.iteration === 2);
    expect((await post(`/api/v1/tasks/${id}/pause`, { reason: 'hold on' })).status).toBe(200);
    await untilEvent(t.base, id, (e) => e.type === 'WORKFLOW_PAUSED', {}, 30_000);
    expect((await json(await fetch(`${t.base}/api/v1/tasks/${id}`))).status).toBe('TASK_STATUS_PAUSED');
    // A model call under way when the pause landed may finish; none starts after it.
    await sleep(500);
    const before = seen.length;
    await sleep(1500);
    expect(seen.length).toBe(before);
    expect((await post(`/api/v1/tasks/${id}/resume`, {})).status).toBe(200);
    const s = await finished(t.base, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(seen.length).toBeGreaterThan(before);
    expect(new Set(llm.requests.map(agentOf).filter(Boolean))).toEqual(new Set(['agent-1', 'agent-2']));
  }, 40_000);
});
