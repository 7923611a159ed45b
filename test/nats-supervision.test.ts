/**
 * The embedded nats-server is supervised: killing only the child under load, the service
 * reports the outage (readiness 503), restarts the child on the same port and store,
 * reconnects, is ready again within 5 s of the kill, and every
 * accepted task completes with a gap-free stream; submissions refused meanwhile (503 with
 * Retry-After) never run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { CONSUMERS, STREAMS } from '../src/bus/index.js';
import { archivedEvents, json, readSse, waitFor } from './helpers/app.js';
import { consumerDrained } from './helpers/barrier.js';
import { gatewayBase, startServiceProcess, type ServiceProcess } from './helpers/process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'taskorch-supervised-'));
let p: ServiceProcess | undefined;
afterAll(async () => {
  // SIGTERM: the service stops its nats-server child too.
  p?.kill('SIGTERM');
  await p?.exited;
  rmSync(dataDir, { recursive: true, force: true });
});

describe('embedded nats-server supervision', () => {
  it('kill -9 of the nats child under load: ready again within 5 s, every accepted task completes gap-free', async () => {
    p = await startServiceProcess({
      DATA_DIR: dataDir,
      DATABASE_URL: inject('pgUrl'),
      GATEWAY_PORT: '0',
      ORCHESTRATOR_GRPC_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      OFFLINE_LLM_CHUNK_DELAY_MS: '4',
      PARTIAL_CHUNK_CHARS: '24',
    });
    const base = await gatewayBase(p);
    const nats = JSON.parse(await p.waitForLog(/"msg":"nats-server started"/)) as { pid: number; url: string };
    const run = `supervised-${Date.now()}`;
    const submit = (q: string) =>
      fetch(`${base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: q, mode: 'complex' }) });

    const accepted: string[] = [];
    for (let i = 0; i < 40; i++) accepted.push((await json(await submit(`${run} before ${i}: Plan it. Then do it. And summarise.`))).task_id);
    const live = accepted.slice(0, 10).map((id) => ({ id, done: readSse(`${base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 60_000 }) }));
    // The kill lands with workflows under way.
    await waitFor(async () => (await json(await fetch(`${base}/api/v1/tasks/${accepted[0]}`))).status === 'TASK_STATUS_RUNNING', 20_000, 10);

    // Keep submitting through the kill.
    let submitting = true;
    const during: { status: number; retryAfter: string | null; marker: string; id?: string; at: number }[] = [];
    const loop = (async () => {
      for (let i = 0; submitting; i++) {
        const marker = `${run} during ${i}:`;
        const r = await submit(`${marker} hello`);
        during.push({ status: r.status, retryAfter: r.headers.get('retry-after'), marker, id: (await json(r)).task_id, at: Date.now() });
        await new Promise((res) => setTimeout(res, 20));
      }
    })();

    const killedAt = Date.now();
    process.kill(nats.pid, 'SIGKILL');
    // The service notices the outage (not ready) before it is ready again: a recovery seen only
    // through 200s could be a kill that never took effect.
    const notReady = await waitFor(
      async () => {
        const r = await fetch(`${base}/readiness`);
        return r.status === 503 ? r : undefined;
      },
      5000,
      5,
    );
    expect((await json(notReady)).checks.nats.ok).toBe(false);
    // Ready again within 5 s of the kill: waitFor's deadline is that bound.
    await waitFor(
      async () => (await fetch(`${base}/readiness`)).status === 200 && (await fetch(`${base}/health`)).status === 200,
      5000 - (Date.now() - killedAt),
      50,
    );
    const readyAt = Date.now();
    await p.waitForLog(/embedded nats-server restarted/, 1000);
    // Submissions are accepted again after the recovery, not only before the kill.
    await waitFor(async () => during.some((d) => d.status === 200 && d.at > readyAt), 10_000, 20);
    submitting = false;
    await loop;
    console.log(
      `supervision: ready again ${readyAt - killedAt} ms after the kill; ${during.filter((d) => d.status === 200).length} submissions accepted, ${during.filter((d) => d.status === 503).length} refused meanwhile`,
    );
    expect(during.filter((d) => d.status !== 200 && d.status !== 503)).toEqual([]);
    for (const d of during) {
      if (d.status === 200) accepted.push(d.id!);
      else expect(d.retryAfter).toMatch(/^\d+$/);
    }

    for (const id of accepted) {
      const s = await waitFor(async () => {
        const b = await json(await fetch(`${base}/api/v1/tasks/${id}`));
        return /COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(b.status) ? b : undefined;
      }, 30_000);
      expect(s.status, `${id}: ${s.error}`).toBe('TASK_STATUS_COMPLETED');
    }
    for (const l of live) {
      const r = await l.done;
      const evs = r.events.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data) as { seq: number; type: string });
      expect(
        evs.map((e) => e.seq),
        l.id,
      ).toEqual(evs.map((_, i) => i + 1));
      expect(evs.at(-1)?.type).toBe('STREAM_END');
    }
    for (const id of accepted) {
      const seqs = (await archivedEvents(base, id)).map((e) => e.seq);
      expect(seqs, id).toEqual(seqs.map((_, i) => i + 1));
    }
    // Refused submissions never ran, nor will they: the workers' consumer has nothing left to
    // deliver or unacknowledged, so a stray start message for one of them would have acted.
    await consumerDrained(nats.url, STREAMS.tasks, CONSUMERS.workers);
    const sql = postgres(inject('pgUrl'), { max: 1, onnotice: () => {} });
    try {
      for (const d of during.filter((x) => x.status === 503)) expect(await sql`SELECT id FROM tasks WHERE query LIKE ${d.marker + '%'}`).toHaveLength(0);
    } finally {
      await sql.end();
    }
  }, 120_000);
});
