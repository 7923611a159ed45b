/**
 * Streaming that is live: a model's deltas reach SSE clients while the model is still
 * answering (LLM_PARTIAL is flushed within its coalescing window), instead of being held back
 * until PARTIAL_CHUNK_CHARS (512) exist or the answer ends. Shown by order, not by timing: the
 * scripted model sends its deltas and then holds the rest of its answer, so whatever the client
 * receives came before the task could end.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { json, readSse, startTestApp, type SseEvent, type TestApp } from './helpers/app.js';
import { startOpenAiServer, scriptedProvider, type OpenAiTestServer } from './helpers/openai-server.js';

let t: TestApp;
let llm: OpenAiTestServer;
beforeAll(async () => {
  llm = await startOpenAiServer();
  t = await startTestApp({ ENABLE_CACHE: '0' }, { llm: scriptedProvider(llm, 60_000) });
});
afterAll(async () => {
  await t?.stop();
  await llm?.close();
});

it("a model's deltas reach the SSE client while the model is still answering, in order, before the task ends", async () => {
  llm.enqueue({ type: 'stall', content: ['Streaming ', 'feels ', 'live.'] });
  const r = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'Say something short.', mode: 'simple' }),
  });
  const { task_id } = await json(r);
  const text = (events: SseEvent[]) =>
    events
      .filter((e) => e.event === 'thread.message.delta')
      .map((e) => JSON.parse(e.data).message)
      .join('');
  const { events } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${task_id}`, { until: (_e, all) => text(all) === 'Streaming feels live.' });
  // Every delta, in the model's order, far short of 512 characters: nothing waited for more.
  expect(text(events)).toBe('Streaming feels live.');
  const types = events.map((e) => JSON.parse(e.data).type);
  expect(types).toContain('LLM_PARTIAL');
  expect(types).not.toContain('WORKFLOW_COMPLETED');
  // The model still holds the rest of its answer: the task has not ended.
  const status = await json(await fetch(`${t.base}/api/v1/tasks/${task_id}`));
  expect(status.status).toBe('TASK_STATUS_RUNNING');
  await fetch(`${t.base}/api/v1/tasks/${task_id}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
}, 30_000);
