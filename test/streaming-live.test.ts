/**
 * Streaming that feels live: with OFFLINE_LLM_CHUNK_DELAY_MS the offline provider streams
 * word-sized pieces at that pace, and each reaches SSE clients as it comes (LLM_PARTIAL is
 * flushed within 50 ms), instead of being held back until PARTIAL_CHUNK_CHARS (512) exist.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { json, startTestApp, type TestApp } from './helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ OFFLINE_LLM_CHUNK_DELAY_MS: '120' });
});
afterAll(async () => {
  await t?.stop();
});

it('a word every 120 ms reaches the SSE client as its own delta, about 120 ms apart', async () => {
  const r = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'Say something short.', mode: 'simple' }),
  });
  const { task_id } = await json(r);
  const res = await fetch(`${t.base}/api/v1/stream/sse?workflow_id=${task_id}`);
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  const deltas: { at: number; text: string }[] = [];
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const at = performance.now();
    buf += dec.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (event === 'thread.message.delta' && data) deltas.push({ at, text: JSON.parse(data).message });
    }
    if (deltas.length >= 25) break;
  }
  await reader.cancel();
  // Word-sized pieces, each its own event: nothing waited for 512 characters.
  expect(deltas.length).toBeGreaterThanOrEqual(25);
  for (const d of deltas) expect(d.text.trim().split(/\s+/).length, JSON.stringify(d.text)).toBe(1);
  const gaps = deltas.slice(1).map((d, i) => d.at - deltas[i]!.at);
  gaps.sort((a, b) => a - b);
  const median = gaps[Math.floor(gaps.length / 2)]!;
  // At the model's pace: a delta held back would show as a gap of 2+ words (240 ms+).
  expect(median).toBeGreaterThan(80);
  expect(median).toBeLessThan(170);
  expect(gaps.filter((g) => g > 230).length).toBeLessThanOrEqual(2);
}, 30_000);
