/**
 * Stream delivery under stress: 200 workflows whose events are published straight onto the
 * bus at random paces, and clients attaching to them at random moments (before the first
 * event, mid-stream, after STREAM_END; first client of a feed or joining a warm one) over
 * SSE and WebSocket, with no resume point, a stream id or a plain seq, some reading slowly.
 * Every client must see every seq after its resume point exactly once, in order, ending
 * with STREAM_END; where JetStream no longer retains the start, an explicit REPLAY_GAP
 * comes first. Seeded: STRESS_SEED=<n> replays a run; the seed is printed on failure.
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { PipelinedPublisher, encodeEvent, msgIdOf, streamId, subjects, type WorkflowEvent } from '../src/bus/index.js';
import { readSse, startTestApp, type TestApp } from './helpers/app.js';
import { rng } from './helpers/rng.js';

const RETAINED = 200; // EVENTS_MAX_PER_WORKFLOW for this run: long workflows lose their start
const WORKFLOWS = 200;

interface Seen {
  seqs: number[];
  types: string[];
  gap?: { requested_after: number; first_available_seq: number; index: number };
  error?: string;
}

let t: TestApp;
let nc: NatsConnection;
let pub: PipelinedPublisher;

beforeAll(async () => {
  t = await startTestApp({ ROLES: 'gateway', GATEWAY_SKIP_AUTH: '1', EVENTS_MAX_PER_WORKFLOW: String(RETAINED), STREAMING_RING_CAPACITY: '64' });
  nc = await connect({ servers: t.natsUrl });
  pub = new PipelinedPublisher(nc);
}, 60_000);

afterAll(async () => {
  pub?.close();
  await nc?.close();
  await t?.stop();
});

function sseClient(wf: string, resume: { header?: string; query?: string }, slow: boolean): Promise<Seen> {
  const q = resume.query !== undefined ? `&last_event_id=${encodeURIComponent(resume.query)}` : '';
  return readSse(`${t.base}/api/v1/stream/sse?workflow_id=${wf}${q}`, {
    headers: resume.header !== undefined ? { 'Last-Event-ID': resume.header } : undefined,
    timeoutMs: 100_000, // under a full parallel suite on 2 cores this test runs ~15x slower than alone
    readDelayMs: slow ? 15 : 0,
  }).then((r) => {
    const seen: Seen = { seqs: [], types: [] };
    if (r.status !== 200) seen.error = `status ${r.status}: ${r.body}`;
    for (const e of r.events) {
      if (e.event === 'done') continue;
      const d = JSON.parse(e.data);
      if (e.event === 'REPLAY_GAP') seen.gap = { ...d, index: seen.seqs.length };
      else if (e.event === 'error') seen.error = d.error;
      else {
        seen.seqs.push(d.seq);
        seen.types.push(d.type);
      }
    }
    if (!r.events.some((e) => e.event === 'done')) seen.error ??= 'no done event';
    return seen;
  });
}

function wsClient(wf: string, resume: string | undefined, slow: boolean): Promise<Seen> {
  return new Promise((resolve) => {
    const seen: Seen = { seqs: [], types: [] };
    const q = resume !== undefined ? `&last_event_id=${encodeURIComponent(resume)}` : '';
    const ws = new WebSocket(`${t.base.replace('http', 'ws')}/api/v1/stream/ws?workflow_id=${wf}${q}`);
    const timer = setTimeout(() => {
      seen.error = 'timeout';
      ws.terminate();
    }, 100_000);
    let n = 0;
    ws.on('message', (raw) => {
      const d = JSON.parse(String(raw));
      if (d.type === 'REPLAY_GAP') seen.gap = { ...d, index: seen.seqs.length };
      else {
        seen.seqs.push(d.seq);
        seen.types.push(d.type);
      }
      // A slow reader: stop reading from the socket now and then.
      if (slow && ++n % 20 === 0) {
        const sock = (ws as unknown as { _socket: Socket })._socket;
        sock.pause();
        setTimeout(() => sock.resume(), 30);
      }
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      if (code !== 1000) seen.error = `closed ${code} ${reason}`;
      resolve(seen);
    });
    ws.on('error', (err) => {
      seen.error = String(err);
    });
  });
}

describe('stream delivery under stress', () => {
  it(`${WORKFLOWS} workflows, clients attaching at random moments: every seq once, in order, STREAM_END last`, async () => {
    const seed = Number(process.env.STRESS_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const rand = rng(seed);
    const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
    const failures: string[] = [];
    let gaps = 0;

    const runWorkflow = async (w: number) => {
      const wf = randomUUID();
      // Most are short; one in ten outgrows what JetStream retains for it.
      const total = rand() < 0.1 ? RETAINED + 20 + Math.floor(rand() * 150) : 5 + Math.floor(rand() * 80);
      await sleep(rand() * 3000);
      const clients: { plan: string; after: number; done: Promise<Seen> }[] = [];
      const attach = (moment: string, published: number) => {
        const after = rand() < 0.4 ? 0 : Math.floor(rand() * (published + 5));
        const transport = rand() < 0.5 ? 'sse' : 'ws';
        const slow = rand() < 0.25;
        const form = after === 0 && rand() < 0.5 ? 'none' : pick(['stream-id', 'seq', 'header']);
        const id = form === 'stream-id' ? streamId(Date.now(), after) : String(after);
        const effAfter = form === 'none' ? 0 : after;
        const plan = `wf#${w} ${wf} total=${total} ${moment} ${transport} resume=${form}:${effAfter}${slow ? ' slow' : ''}`;
        const done =
          transport === 'sse'
            ? sseClient(wf, form === 'none' ? {} : form === 'header' ? { header: id } : { query: id }, slow)
            : wsClient(wf, form === 'none' ? undefined : id, slow);
        clients.push({ plan, after: effAfter, done });
      };
      if (rand() < 0.3) attach('before-first-event', 0);
      const attachAt = new Set(Array.from({ length: 1 + Math.floor(rand() * 2) }, () => 1 + Math.floor(rand() * total)));
      const at = Date.now();
      for (let seq = 1; seq <= total;) {
        const burst = 1 + Math.floor(rand() * 12);
        for (let k = 0; k < burst && seq <= total; k++, seq++) {
          const ev: WorkflowEvent = {
            workflow_id: wf,
            seq,
            stream_id: streamId(at + seq, seq),
            type: seq === total ? 'STREAM_END' : seq === 1 ? 'WORKFLOW_STARTED' : 'LLM_PARTIAL',
            agent_id: 'stress',
            message: `event ${seq}`,
            timestamp: new Date().toISOString(),
          };
          void pub.publish(subjects.events(wf), encodeEvent(ev), msgIdOf(wf, seq));
          if (attachAt.has(seq)) attach('mid-stream', seq);
        }
        await sleep(rand() * 15);
      }
      await sleep(200 + rand() * 300);
      // After the end, on a cold feed: sometimes two at once (the second joins while the
      // feed is still loading the history).
      if (rand() < 0.7) {
        attach('after-end', total);
        if (rand() < 0.5) attach('after-end-joining', total);
      }
      for (const c of clients) {
        const s = await c.done;
        if (s.gap) gaps++;
        const why = check(s, c.after, total);
        if (why) failures.push(`${c.plan}: ${why}`);
      }
      return clients.length;
    };

    const counts = await Promise.all(Array.from({ length: WORKFLOWS }, (_, w) => runWorkflow(w)));
    const clients = counts.reduce((a, b) => a + b, 0);
    console.log(
      `stream stress (STRESS_SEED=${seed}): ${WORKFLOWS} workflows, ${clients} clients, ${gaps} told of a REPLAY_GAP, ${failures.length} wrong deliveries`,
    );
    if (failures.length) console.error(`stream stress failed with STRESS_SEED=${seed}:\n${failures.slice(0, 20).join('\n')}`);
    expect(failures, `STRESS_SEED=${seed}`).toEqual([]);
    expect(clients).toBeGreaterThan(WORKFLOWS);
  }, 150_000);
});

/** Why `s` is not a correct delivery for a client that had seen up to `after` of `total`. */
function check(s: Seen, after: number, total: number): string | undefined {
  if (s.error) return s.error;
  let from = after + 1;
  if (s.gap) {
    if (s.gap.index !== 0) return `REPLAY_GAP after ${s.gap.index} events`;
    if (s.gap.requested_after !== after) return `REPLAY_GAP requested_after ${s.gap.requested_after}, expected ${after}`;
    if (total <= RETAINED) return 'REPLAY_GAP on a workflow whose events are all retained';
    if (s.gap.first_available_seq <= after + 1) return `REPLAY_GAP with nothing missing (first ${s.gap.first_available_seq})`;
    from = s.gap.first_available_seq;
  } else if (total > RETAINED && after < total - RETAINED && s.seqs[0] !== after + 1) {
    return `events missing without REPLAY_GAP (first ${s.seqs[0]})`;
  }
  const want = Array.from({ length: Math.max(0, total - from + 1) }, (_, i) => from + i);
  if (s.seqs.length !== want.length || s.seqs.some((q, i) => q !== want[i])) {
    const dup = s.seqs.length - new Set(s.seqs).size;
    return `seqs ${JSON.stringify(s.seqs.slice(0, 12))}${s.seqs.length > 12 ? '...' : ''} (${s.seqs.length}, ${dup} repeated), expected ${from}..${total}`;
  }
  // A client that had seen STREAM_END already gets nothing more and a clean end.
  if (from <= total && s.types[s.types.length - 1] !== 'STREAM_END') return `last event ${s.types[s.types.length - 1]}`;
  return undefined;
}
