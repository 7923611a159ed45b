/**
 * Priority queues (issue 19 §5): a saturated worker (WORKER_CONCURRENCY=2, a model that holds
 * every call until the test opens its gate) with a backlog of low tasks. High tasks queued
 * behind the backlog start before most of it; low tasks still start while highs keep waiting
 * (one fetch in 8 looks at low first); tasks queued at high while PRIORITY_QUEUES=on are still
 * run by a fleet restarted with it off, which refuses a new high task and runs normal ones
 * first come, first served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmProvider, LlmRequest, LlmResult } from '../src/llm/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startTestNats, type TestNats } from './harness/nats.js';

const TAG = /pq-[a-z]+-\d+/;

/** A model whose calls wait until the gate opens; records which task's call arrived, in order. */
class GatedModel implements LlmProvider {
  readonly name = 'gated';
  /** Task tags in the order their first model call arrived (= the order the tasks started). */
  readonly started: string[] = [];
  private open = false;
  private waiting: (() => void)[] = [];

  async complete(req: LlmRequest): Promise<LlmResult> {
    const tag = req.messages.map((m) => TAG.exec(m.content)?.[0]).find(Boolean);
    if (tag && !this.started.includes(tag)) this.started.push(tag);
    if (!this.open) {
      await new Promise<void>((resolve, reject) => {
        this.waiting.push(resolve);
        req.signal?.addEventListener('abort', () => reject(req.signal!.reason as Error), { once: true });
      });
    }
    return {
      text: 'done',
      model: 'gated-model',
      provider: 'gated',
      finishReason: 'stop',
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, costUsd: 0 },
    };
  }

  /** Lets every held and later call answer at once. */
  release(): void {
    this.open = true;
    this.waiting.splice(0).forEach((r) => r());
  }

  close(): void {
    this.open = false;
  }
}

const model = new GatedModel();
/** One nats-server for both apps: the queues outlive the app that filled them. */
let nats: TestNats;
let t: TestApp | undefined;
const env = { WORKER_CONCURRENCY: '2', ENABLE_CACHE: 'false' };

async function submit(tag: string, priority?: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${t!.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: `Say done (${tag})`, mode: 'simple', ...(priority ? { priority } : {}) }),
  });
  return { status: r.status, body: await json(r) };
}

async function submitAll(tags: string[], priority?: string): Promise<string[]> {
  const ids: string[] = [];
  for (const tag of tags) {
    const r = await submit(tag, priority);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ids.push(r.body.task_id);
  }
  return ids;
}

const completed = (ids: string[]) =>
  waitFor(
    async () => {
      for (const id of ids) {
        const s = await json(await fetch(`${t!.base}/api/v1/tasks/${id}`));
        if (s.status !== 'TASK_STATUS_COMPLETED') return false;
      }
      return true;
    },
    30_000,
    50,
  );

const tags = (kind: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => `pq-${kind}-${from + i}`);

/** Fills both worker slots with held tasks, so everything submitted next waits in the queues. */
async function saturate(name: string): Promise<string[]> {
  model.close();
  const before = model.started.length;
  const ids = await submitAll(tags(name, 2));
  await waitFor(async () => model.started.length === before + 2);
  return ids;
}

beforeAll(async () => {
  nats = await startTestNats();
  t = await startTestApp({ ...env, PRIORITY_QUEUES: 'on' }, { llm: model, natsUrl: nats.url });
});
afterAll(async () => {
  model.release();
  await t?.stop();
  await nats?.stop();
});

describe('PRIORITY_QUEUES=on', () => {
  it('high tasks queued behind a backlog of low ones start before most of it', async () => {
    const busy = await saturate('warm');
    const lows = await submitAll(tags('low', 8), 'low');
    const highs = await submitAll(tags('high', 3), 'high');
    const from = model.started.length;
    model.release();
    await completed([...busy, ...lows, ...highs]);
    const order = model.started.slice(from);
    const lastHigh = Math.max(...tags('high', 3).map((h) => order.indexOf(h)));
    // At most one fetch in 8 looks at low first, and a fetch takes at most the 2 free slots.
    expect(order.slice(0, lastHigh).filter((x) => x.startsWith('pq-low-')).length, order.join(' ')).toBeLessThanOrEqual(2);
  });

  it('low tasks still start while high ones keep waiting', async () => {
    const busy = await saturate('warmb');
    const lows = await submitAll(tags('low', 4, 100), 'low');
    const highs = await submitAll(tags('high', 20, 100), 'high');
    const from = model.started.length;
    model.release();
    await completed([...busy, ...lows, ...highs]);
    const order = model.started.slice(from);
    const lastHigh = Math.max(...tags('high', 20, 100).map((h) => order.indexOf(h)));
    // 20 highs take at least 10 fetches: one of every 8 took the oldest low first.
    expect(order.slice(0, lastHigh).filter((x) => x.startsWith('pq-low-')).length, order.join(' ')).toBeGreaterThanOrEqual(1);
  });

  it('refuses an unknown priority with 400 naming the levels', async () => {
    const r = await submit('pq-bad-0', 'urgent');
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/priority/);
  });
});

describe('switching PRIORITY_QUEUES off', () => {
  it('strands nothing queued at high, refuses a new high task, and runs normal tasks first come first served', async () => {
    const busy = await saturate('warmc');
    const queuedHigh = await submitAll(tags('high', 3, 200), 'high');
    await t!.stop();
    t = undefined;
    t = await startTestApp({ ...env, PRIORITY_QUEUES: 'off' }, { llm: model, natsUrl: nats.url });
    model.release();
    await completed([...busy, ...queuedHigh]);

    const refused = await submit('pq-high-300', 'high');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/PRIORITY_QUEUES=off/);
    const normal = await submit('pq-norm-300', 'normal');
    expect(normal.status).toBe(200);
    await completed([normal.body.task_id]);

    const busy2 = await saturate('warmd');
    const normals = await submitAll(tags('fifo', 6));
    const from = model.started.length;
    model.release();
    await completed([...busy2, ...normals]);
    // Two slots freed at once take two tasks in one fetch, whose model calls may arrive either way round.
    const order = model.started.slice(from);
    tags('fifo', 6).forEach((tag, i) => expect(Math.abs(order.indexOf(tag) - i), order.join(' ')).toBeLessThanOrEqual(1));
  });
});
