/**
 * The durable-execution contract through a NATS outage. Split deployment: one nats-server,
 * the gateway + orchestrator + archiver in this process, two worker processes, the test
 * PostgreSQL. With 200 tasks in flight the nats-server is killed with SIGKILL and started
 * again on the same store 5 s later, while submissions keep coming.
 * - every task accepted before or during the outage completes; none fails;
 * - every workflow's stream (live SSE and the archive) is seq 1..N, each once, STREAM_END last;
 * - a submission during the outage is refused with 503 and Retry-After and never runs, or is
 *   accepted and runs: never a 5xx followed by a run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import postgres from 'postgres';
import { CONSUMERS, STREAMS } from '../src/bus/index.js';
import { archivedEvents, json, readSse, startTestApp, waitFor, type SseResult, type TestApp } from './helpers/app.js';
import { consumerDrained } from './helpers/barrier.js';
import { startServiceProcess, type ServiceProcess } from './helpers/process.js';
import { startTestNats, type TestNats } from './harness/nats.js';

const IN_FLIGHT = 200;
const DURING = 100;

let nats: TestNats;
let t: TestApp;
const workers: ServiceProcess[] = [];
let sql: postgres.Sql;

beforeAll(async () => {
  nats = await startTestNats();
  t = await startTestApp({ ROLES: 'gateway,orchestrator,archiver', WORKER_ACK_WAIT_MS: '4000' }, { natsUrl: nats.url });
  const env = {
    ROLES: 'worker',
    NATS_URL: nats.url,
    DATABASE_URL: inject('pgUrl'),
    DATABASE_MAX_CONNECTIONS: '4',
    WORKER_ACK_WAIT_MS: '4000',
    OFFLINE_LLM_CHUNK_DELAY_MS: '8',
    PARTIAL_CHUNK_CHARS: '24',
  };
  workers.push(...(await Promise.all([startServiceProcess(env), startServiceProcess(env)])));
  sql = postgres(inject('pgUrl'), { max: 2, onnotice: () => {} });
}, 60_000);

afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await sql?.end();
  await t?.stop();
  await nats?.stop();
});

const submit = (query: string) =>
  fetch(`${t.base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, mode: 'complex' }) });

function seqsOf(r: SseResult): { seqs: number[]; last?: string; done: boolean } {
  const evs = r.events.filter((e) => e.event !== 'done' && e.event !== 'REPLAY_GAP').map((e) => JSON.parse(e.data) as { seq: number; type: string });
  return { seqs: evs.map((e) => e.seq), last: evs.at(-1)?.type, done: r.events.at(-1)?.event === 'done' };
}

describe('NATS outage under load', () => {
  it('kill -9 of the nats-server with 200 tasks in flight: nothing fails, nothing is lost or repeated, refused submissions never run', async () => {
    const run = `outage-${Date.now()}`;
    const accepted: string[] = [];
    for (let i = 0; i < IN_FLIGHT; i++) {
      const r = await submit(`${run} in-flight ${i}: Research the topic. Then compare the options. And write a summary.`);
      expect(r.status).toBe(200);
      accepted.push((await json(r)).task_id);
    }
    // Live clients on a quarter of the workflows, reading through the outage.
    const live = accepted
      .filter((_, i) => i % 4 === 0)
      .map((id) => ({ id, done: readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 120_000 }) }));
    // Let the workflows get going, then take NATS away for 5 s.
    const running = async () =>
      (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM tasks WHERE query LIKE ${run + ' in-flight %'} AND status = 'TASK_STATUS_RUNNING'`)[0].n;
    await waitFor(async () => (await running()) >= IN_FLIGHT / 4, 60_000, 50);
    const inFlightAtKill = await running();
    const outage = nats.killAndRestart(5000);
    const during: { status: number; retryAfter: string | null; marker: string; id?: string; body: unknown }[] = [];
    const t0 = Date.now();
    for (let i = 0; i < DURING; i++) {
      const marker = `${run} during ${i}:`;
      const r = await submit(`${marker} What is the capital of France?`);
      const body = await json(r);
      during.push({ status: r.status, retryAfter: r.headers.get('retry-after'), marker, id: body.task_id, body });
      await new Promise((res) => setTimeout(res, Math.max(0, t0 + ((i + 1) * 6000) / DURING - Date.now())));
    }
    await outage;

    // Submissions during the outage: 200 (and it runs) or 503 with Retry-After (and it never runs).
    const odd = during.filter((d) => d.status !== 200 && d.status !== 503);
    expect(odd, JSON.stringify(odd.slice(0, 3))).toEqual([]);
    const refused = during.filter((d) => d.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    for (const d of refused) {
      expect(d.retryAfter).toMatch(/^\d+$/);
      expect(d.body).toMatchObject({ error: expect.stringMatching(/unavailable/i) });
    }
    for (const d of during) if (d.status === 200) accepted.push(d.id!);
    console.log(
      `outage: ${inFlightAtKill} of ${IN_FLIGHT} running at the kill, ${DURING} submitted during it: ${DURING - refused.length} accepted, ${refused.length} refused (503)`,
    );

    // Every accepted task completes.
    const restartedAt = Date.now();
    const statuses = await waitFor(
      async () => {
        const rows = await sql<{ id: string; status: string; error: string }[]>`SELECT id, status, error FROM tasks WHERE id = ANY(${accepted}::uuid[])`;
        return rows.length === accepted.length && rows.every((r) => /COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(r.status)) ? rows : undefined;
      },
      90_000,
      250,
    );
    console.log(`outage: all ${accepted.length} accepted tasks ended ${Date.now() - restartedAt} ms after the server was back`);
    const notCompleted = statuses.filter((r) => r.status !== 'TASK_STATUS_COMPLETED');
    expect(notCompleted.map((r) => `${r.id} ${r.status} ${r.error}`)).toEqual([]);

    // Refused submissions never ran, nor will they: the workers' consumer has no start message
    // left to deliver or unacknowledged, so a stray one for a refused task would have acted.
    await consumerDrained(nats.url, STREAMS.tasks, CONSUMERS.workers);
    for (const d of refused) {
      const rows = await sql`SELECT id FROM tasks WHERE query LIKE ${d.marker + '%'}`;
      expect(rows, d.marker).toHaveLength(0);
    }

    // Live streams: every seq once, in order, STREAM_END last.
    for (const l of live) {
      const s = seqsOf(await l.done);
      expect(s.seqs, l.id).toEqual(s.seqs.map((_, i) => i + 1));
      expect(s.last, l.id).toBe('STREAM_END');
      expect(s.done, l.id).toBe(true);
    }
    // The archive of every workflow: 1..N with STREAM_END last, where N is what the stream says.
    for (const id of accepted) {
      const seqs = (await archivedEvents(t.base, id)).map((e) => e.seq);
      expect(seqs, id).toEqual(seqs.map((_, i) => i + 1));
    }
  }, 240_000);

  it('/health and /readiness tell the truth while NATS is away and recover after', async () => {
    expect((await fetch(`${t.base}/health`)).status).toBe(200);
    const outage = nats.killAndRestart(2000);
    const h = await waitFor(async () => {
      const r = await fetch(`${t.base}/health`);
      return r.status === 503 ? r : undefined;
    }, 5000);
    expect(await json(h)).toMatchObject({ status: 'unhealthy', checks: { nats: { ok: false } } });
    const ready = await fetch(`${t.base}/readiness`);
    expect(ready.status).toBe(503);
    expect((await json(ready)).checks.nats.ok).toBe(false);
    await outage;
    await waitFor(async () => (await fetch(`${t.base}/readiness`)).status === 200, 15_000);
    expect((await fetch(`${t.base}/health`)).status).toBe(200);
  }, 60_000);
});
