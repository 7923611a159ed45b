import { describe, expect, it } from 'vitest';
import { estimateTokens, LlmError, OFFLINE_LABEL, OFFLINE_MODEL, OfflineProvider, type ChatMessage, type LlmRequest } from './index.js';

const req = (messages: ChatMessage[], over: Partial<LlmRequest> = {}): LlmRequest => ({ messages, tier: 'small', maxTokens: 100, temperature: 0.7, ...over });
const ask = (q: string, system = 'You are helpful.') =>
  req([
    { role: 'system', content: system },
    { role: 'user', content: q },
  ]);

/** No lone surrogates (String.prototype.isWellFormed, without needing the ES2024 lib). */
const wellFormed = (s: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

async function collect(p: OfflineProvider, r: LlmRequest) {
  const deltas: string[] = [];
  const result = await p.complete(r, (d) => deltas.push(d));
  return { result, deltas };
}

describe('OfflineProvider', () => {
  it('is deterministic: the same messages give the same text, other messages another text', async () => {
    const p = new OfflineProvider();
    const a1 = await p.complete(ask('What is the capital of France?'));
    const a2 = await new OfflineProvider({ chunkDelayMs: 0, chunkChars: 7 }).complete(ask('What is the capital of France?'));
    const b = await p.complete(ask('What is the capital of Spain?'));
    const c = await p.complete(ask('What is the capital of France?', 'Another system prompt.'));
    expect(a2.text).toBe(a1.text);
    expect(b.text).not.toBe(a1.text);
    expect(c.text).not.toBe(a1.text);
    expect(a1.text).toContain('What is the capital of France?');
  });

  it('is clearly labelled as offline: label first, offline model and provider, no cost', async () => {
    const r = await new OfflineProvider().complete(ask('hi'));
    expect(r.text.startsWith(OFFLINE_LABEL)).toBe(true);
    expect(r.model).toBe(OFFLINE_MODEL);
    expect(r.model).toBe('offline-deterministic');
    expect(r.provider).toBe('offline');
    expect(new OfflineProvider().name).toBe('offline');
    expect(r.finishReason).toBe('stop');
    expect(r.usage.costUsd).toBe(0);
  });

  it('streams deltas that concatenate to the text, each at most chunkChars long', async () => {
    const p = new OfflineProvider({ chunkDelayMs: 0, chunkChars: 10 });
    const { result, deltas } = await collect(p, ask('Explain streaming in one sentence, please, with some detail.'));
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join('')).toBe(result.text);
    for (const d of deltas) expect(d.length).toBeLessThanOrEqual(10);
    expect(deltas.every((d) => d.length > 0)).toBe(true);
  });

  it('never splits a surrogate pair across deltas (each delta is valid text on its own)', async () => {
    expect(wellFormed('a😀b')).toBe(true);
    expect(wellFormed('😀'.slice(0, 1))).toBe(false);
    const q = '😀'.repeat(300) + ' end';
    for (const chunkChars of [3, 7, 48]) {
      const { result, deltas } = await collect(new OfflineProvider({ chunkDelayMs: 0, chunkChars }), ask(q));
      expect(deltas.join('')).toBe(result.text);
      for (const d of deltas) expect(wellFormed(d)).toBe(true);
    }
    // The restated query is cut at 400 UTF-16 units: the cut must not leave half an emoji either.
    const r = await new OfflineProvider().complete(ask('a' + '😀'.repeat(300)));
    expect(wellFormed(r.text)).toBe(true);
  });

  it('usage: input tokens sum over the messages, output from the text, total is their sum', async () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'x'.repeat(40) },
      { role: 'user', content: 'y'.repeat(9) },
      { role: 'assistant', content: 'z'.repeat(1) },
      { role: 'user', content: 'final question' },
    ];
    const r = await new OfflineProvider().complete(req(messages));
    expect(r.usage.inputTokens).toBe(10 + 3 + 1 + 4);
    expect(r.usage.outputTokens).toBe(estimateTokens(r.text));
    expect(r.usage.totalTokens).toBe(r.usage.inputTokens + r.usage.outputTokens);
  });

  it('answers a subtask-decomposition prompt with a JSON array of 2-4 subtasks, each depending on the one before', async () => {
    const r = await new OfflineProvider().complete(
      ask('Find the population of Paris and then compare it with Berlin.', 'Decompose the task. Respond with a JSON array of subtasks.'),
    );
    const parts = JSON.parse(r.text) as { id: string; description: string; dependencies: string[] }[];
    expect(parts.length).toBeGreaterThanOrEqual(2);
    expect(parts.length).toBeLessThanOrEqual(4);
    expect(parts[0]).toEqual({ id: 'subtask-1', description: expect.any(String), dependencies: [] });
    expect(parts[1]).toEqual({ id: 'subtask-2', description: expect.any(String), dependencies: ['subtask-1'] });
  });

  it('an already aborted signal rejects, with or without a delta callback', async () => {
    const ac = new AbortController();
    ac.abort();
    const p = new OfflineProvider();
    await expect(p.complete({ ...ask('q'), signal: ac.signal }, () => {})).rejects.toThrow(/aborted/);
    await expect(p.complete({ ...ask('q'), signal: ac.signal })).rejects.toThrow(/aborted/);
  });

  it('aborting during a paced stream (chunkDelayMs) stops it with a retryable LlmError', async () => {
    const p = new OfflineProvider({ chunkDelayMs: 20, chunkChars: 4 });
    const ac = new AbortController();
    const deltas: string[] = [];
    const done = p.complete({ ...ask('a fairly long question so that there are many chunks to stream'), signal: ac.signal }, (d) => {
      deltas.push(d);
      if (deltas.length === 2) ac.abort();
    });
    const err = await done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).retryable).toBe(true);
    expect((err as LlmError).message).toMatch(/aborted/);
    expect(deltas).toHaveLength(2);
  });

  it('does not pile up abort listeners on a long-lived signal while pacing', async () => {
    const ac = new AbortController();
    let added = 0;
    let removed = 0;
    const signal = ac.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...a: Parameters<AbortSignal['addEventListener']>) => {
      added++;
      add(...a);
    }) as AbortSignal['addEventListener'];
    signal.removeEventListener = ((...a: Parameters<AbortSignal['removeEventListener']>) => {
      removed++;
      remove(...a);
    }) as AbortSignal['removeEventListener'];
    const deltas: string[] = [];
    await new OfflineProvider({ chunkDelayMs: 1, chunkChars: 16 }).complete({ ...ask('count my listeners'), signal }, (d) => deltas.push(d));
    expect(deltas.length).toBeGreaterThan(5);
    expect(added).toBe(deltas.length);
    expect(added - removed).toBe(0);
  });
});
