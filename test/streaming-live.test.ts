/**
 * Streaming that is live: a model's deltas reach SSE clients while the model is still
 * answering (LLM_PARTIAL is flushed within its coalescing window), instead of being held back
 * until PARTIAL_CHUNK_CHARS (512) exist or the answer ends. Shown by order, not by timing: the
 * scripted model sends its deltas and then holds the rest of its answer, so whatever the client
 * receives came before the task could end.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { json, startTestApp, type TestApp } from './helpers/app.js';
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

/** Reads SSE frames until `until` says enough, then stops reading. */
async function readSse(url: string, until: (events: { event: string; data: any }[]) => boolean): Promise<{ event: string; data: any }[]> {
  const ac = new AbortController();
  const res = await fetch(url, { signal: ac.signal });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  const events: { event: string; data: any }[] = [];
  let buf = '';
  while (!until(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (event && data) events.push({ event, data: JSON.parse(data) });
    }
  }
  ac.abort();
  return events;
}

it("a model's deltas reach the SSE client while the model is still answering, in order, before the task ends", async () => {
  llm.enqueue({ type: 'stall', content: ['Streaming ', 'feels ', 'live.'] });
  const r = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'Say something short.', mode: 'simple' }),
  });
  const { task_id } = await json(r);
  const text = (events: { event: string; data: any }[]) =>
    events
      .filter((e) => e.event === 'thread.message.delta')
      .map((e) => e.data.message)
      .join('');
  const events = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${task_id}`, (evs) => text(evs) === 'Streaming feels live.');
  // Every delta, in the model's order, far short of 512 characters: nothing waited for more.
  expect(text(events)).toBe('Streaming feels live.');
  const types = events.map((e) => e.data.type);
  expect(types).toContain('LLM_PARTIAL');
  expect(types).not.toContain('WORKFLOW_COMPLETED');
  // The model still holds the rest of its answer: the task has not ended.
  const status = await json(await fetch(`${t.base}/api/v1/tasks/${task_id}`));
  expect(status.status).toBe('TASK_STATUS_RUNNING');
  await fetch(`${t.base}/api/v1/tasks/${task_id}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
}, 30_000);
