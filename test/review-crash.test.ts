/**
 * A plan review survives its worker: the worker process is killed (SIGKILL) while the task
 * waits for review; feedback and approval happen while no worker runs; a worker started
 * afterwards resumes the task, which completes once on the approved plan, with its events'
 * seq gap-free (the feedback's events included) and no step taken for one cut off by a crash.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { archivedEvents, json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { scriptedProvider, startOpenAiServer, type OpenAiTestServer, type RecordedRequest } from './helpers/openai-server.js';
import { scriptedModelEnv, startServiceProcess, testBusEnv, type ServiceProcess } from './helpers/process.js';
import { startResearchWeb, type ResearchWeb } from './helpers/research-web.js';

let t: TestApp;
let llm: OpenAiTestServer;
let web: ResearchWeb;
const procs: ServiceProcess[] = [];

const system = (r: RecordedRequest) => String((r.messages ?? []).find((m) => m.role === 'system')?.content ?? '');
const lastUser = (r: RecordedRequest) => String([...(r.messages ?? [])].reverse().find((m) => m.role === 'user')?.content ?? '');

beforeAll(async () => {
  llm = await startOpenAiServer();
  web = await startResearchWeb();
  llm.setDefault((r) => {
    const sys = system(r);
    if (sys.startsWith('Break the research question')) return { type: 'completion', content: '["First draft question?"]' };
    if (sys.startsWith('You help a person review a research plan'))
      return { type: 'completion', content: '{"intent": "ready", "message": "1. Reviewed question"}' };
    if (sys.startsWith('You are a research agent')) {
      return (r.messages ?? []).some((m) => m.role === 'tool')
        ? { type: 'completion', content: `Windows reset (${web.pageUrl}).` }
        : { type: 'completion', content: '', toolCalls: [{ id: 'f1', name: 'web_fetch', arguments: JSON.stringify({ url: web.pageUrl }) }] };
    }
    if (sys.startsWith('You check research coverage')) return { type: 'completion', content: '{"complete": true, "gaps": []}' };
    return { type: 'completion', content: 'Windows reset at their end [1].' };
  });
  // The gateway (and its review service) runs here; workers run in their own processes.
  t = await startTestApp({ ROLES: 'gateway,orchestrator,archiver', WORKER_ACK_WAIT_MS: '1500' }, { llm: scriptedProvider(llm) });
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await t?.stop();
  await llm?.close();
});

async function worker(): Promise<ServiceProcess> {
  const p = await startServiceProcess({
    ROLES: 'worker',
    ...testBusEnv(t.natsUrl),
    ...scriptedModelEnv(llm.baseUrl),
    ...web.env,
  });
  procs.push(p);
  return p;
}

const review = (id: string, body?: unknown) =>
  fetch(`${t.base}/api/v1/tasks/${id}/review`, body ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {});

it('worker killed while the task waits for review; feedback and approval with no worker; the next worker completes it once', async () => {
  const w1 = await worker();
  const r = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'How do fixed windows reset?', context: { require_review: true } }),
  });
  const { task_id: id } = await json(r);
  await waitFor(async () => (await t.app.store.getTask(id))?.status === 'TASK_STATUS_PAUSED' && (await review(id)).status === 200, 60_000, 50);
  w1.kill('SIGKILL');
  await w1.exited;

  const f = await review(id, { action: 'feedback', message: 'Make it about resets' });
  expect(f.status).toBe(200);
  expect((await json(f)).plan).toMatchObject({ round: 2, version: 2, intent: 'ready' });
  const a = await review(id, { action: 'approve' });
  expect(a.status).toBe(200);
  // Decided while no worker runs: the task waits for one.
  expect((await t.app.store.getTask(id))?.status).not.toMatch(/COMPLETED|FAILED/);

  const w2 = await worker();
  const s = await waitFor(async () => {
    const x = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
    return /COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(x.status) ? x : undefined;
  }, 60_000);
  expect(s.status, JSON.stringify(s)).toBe('TASK_STATUS_COMPLETED');
  expect(s.metadata.research.questions.map((q: { question: string }) => q.question)).toEqual(['Reviewed question']);
  // The plan was made once (journaled before the crash), not again.
  expect(llm.requests.filter((x) => system(x).startsWith('Break the research question'))).toHaveLength(1);
  expect(llm.requests.some((x) => lastUser(x).includes('Your sub-question: Reviewed question'))).toBe(true);

  const evs = await archivedEvents(t.base, id);
  expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
  const types = evs.map((e) => e.type);
  expect(types.filter((x) => x === 'WORKFLOW_COMPLETED')).toHaveLength(1);
  expect(types.filter((x) => x === 'STREAM_END')).toHaveLength(1);
  expect(types).not.toContain('ERROR_RECOVERY');
  const order = ['RESEARCH_PLAN_READY', 'REVIEW_USER_FEEDBACK', 'RESEARCH_PLAN_UPDATED', 'RESEARCH_PLAN_APPROVED'].map((x) => types.indexOf(x));
  expect(order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1]!))).toBe(true);
  w2.kill('SIGTERM');
  await w2.exited;
}, 180_000);
