/**
 * Streaming under configurations other than the default, one app each: a slow offline
 * provider (clients join mid-workflow, fan-out), tiny retention (REPLAY_GAP), short heartbeat
 * and inactivity timers, a tiny per-connection buffer with a provider that emits large outputs
 * behind a gate the test opens (slow-client protection), and a client catching up after a stall.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from '@nats-io/transport-node';
import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PipelinedPublisher, encodeEvent, msgIdOf, streamId, subjects, type WorkflowEvent } from '../src/bus/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import {
  DONE,
  TestLlm,
  dechunk,
  eventSubs,
  eventsOf,
  expectWellFormed,
  gw,
  range,
  seqs,
  sse,
  sseBody,
  sseSet,
  sseUrl,
  stalledClient,
  submit,
  waitTerminal,
  wsCollect,
  type Frame,
  type SseResult,
} from './helpers/streams.js';

// --- slow provider: clients joining mid-workflow, fan-out -----------------------------------

describe('live fan-out (slow offline provider)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ OFFLINE_LLM_CHUNK_DELAY_MS: '3', PARTIAL_CHUNK_CHARS: '8' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('clients joining mid-workflow see every seq exactly once, in order; resuming mid-workflow too', async () => {
    const id = await submit(t, { query: 'Describe tides. Then explain the moon. And then summarise.', mode: 'complex' });
    let joined: Promise<SseResult> | undefined;
    let resumed: Promise<SseResult> | undefined;
    let endedAtJoin: boolean | undefined;
    let resumeAfter = 0;
    const first = sse(sseUrl(t, id), {
      until: (f) => {
        if (!joined && f.event !== 'done' && JSON.parse(f.data).seq >= 10) {
          endedAtJoin = gw(t).hub.feeds.get(id)?.ended;
          resumeAfter = JSON.parse(f.data).seq;
          joined = sse(sseUrl(t, id));
          resumed = sse(sseUrl(t, id), { headers: { 'Last-Event-ID': f.id! } });
        }
        return false;
      },
    });
    const a = await first;
    expect(joined, 'the first client saw seq 10').toBeDefined();
    const [b, c] = await Promise.all([joined!, resumed!]);
    expect(endedAtJoin, 'the second client joined before the workflow ended').toBe(false);
    const all = eventsOf(a.frames);
    expect(all.length).toBeGreaterThan(50);
    expect(seqs(all)).toEqual(range(1, all.length));
    expect(all.at(-1)!.type).toBe('STREAM_END');
    expectWellFormed(a.frames);
    expectWellFormed(b.frames);
    expect(eventsOf(b.frames)).toEqual(all);
    expectWellFormed(c.frames);
    expect(eventsOf(c.frames)).toEqual(all.filter((e) => e.seq > resumeAfter));
  });

  it('N clients of one workflow share one upstream NATS subscription and all get the same events', async () => {
    const id = await submit(t, { query: 'Explain fan out. Then explain fan in.', mode: 'complex' });
    const n = 8;
    const clients = Array.from({ length: n }, () => sse(sseUrl(t, id)));
    const wsClient = wsCollect(`ws://127.0.0.1:${t.app.gatewayPort}/api/v1/stream/ws?workflow_id=${id}`);
    const feed = await waitFor(async () => {
      const f = gw(t).hub.feeds.get(id);
      return f && f.subscribers.size === n + 1 ? f : undefined;
    });
    expect(feed.ended).toBe(false);
    expect(eventSubs(t, id)).toBe(1);
    expect([...gw(t).hub.feeds.keys()].filter((k) => k === id)).toHaveLength(1);
    const results = await Promise.all(clients);
    const ws = await wsClient;
    const first = eventsOf(results[0].frames);
    expect(seqs(first)).toEqual(range(1, first.length));
    for (const r of results) {
      expectWellFormed(r.frames);
      expect(eventsOf(r.frames)).toEqual(first);
    }
    expect(seqs(ws.messages)).toEqual(seqs(first));
    // The feed (and its subscription) goes away after its last client left.
    expect(feed.subscribers.size).toBe(0);
    await waitFor(async () => eventSubs(t, id) === 0 && !gw(t).hub.feeds.has(id), 15_000, 100);
  });
});

// --- tiny retention: explicit gaps -----------------------------------------------------------

describe('replay gap (EVENTS_MAX_PER_WORKFLOW=16, STREAMING_RING_CAPACITY=16)', () => {
  const llm = new TestLlm();
  let t: TestApp;
  let id: string;
  let total: number;
  beforeAll(async () => {
    t = await startTestApp({ EVENTS_MAX_PER_WORKFLOW: '16', STREAMING_RING_CAPACITY: '16', PARTIAL_CHUNK_CHARS: '5' }, { llm });
    id = await submit(t, { query: 'Produce many events. Then produce more. And then finish.', mode: 'complex' });
    await waitTerminal(t, id);
    // The archived STREAM_END carries the number of events the workflow produced.
    const h = await waitFor(async () => {
      const b = await json(await fetch(`${t.base}/api/v1/tasks/${id}/events?limit=5000`));
      return b.events.at(-1)?.type === 'STREAM_END' ? b : undefined;
    });
    total = h.events.at(-1).seq;
    expect(total).toBeGreaterThan(100);
  });
  afterAll(async () => {
    await t?.stop();
  });

  function expectGapThenTail(frames: Frame[], after: number) {
    expect(frames[0].event).toBe('REPLAY_GAP');
    const gap = JSON.parse(frames[0].data);
    expect(gap).toMatchObject({ type: 'REPLAY_GAP', requested_after: after });
    const evs = eventsOf(frames);
    expect(gap.first_available_seq).toBe(evs[0].seq);
    expect(evs[0].seq).toBeGreaterThan(after + 1);
    // No silent gap: from the first retained event to STREAM_END, contiguous.
    expect(seqs(evs)).toEqual(range(gap.first_available_seq, total));
    expect(evs.length).toBeLessThanOrEqual(16);
    expect(evs.at(-1)!.type).toBe('STREAM_END');
    expect(frames.filter((f) => f.event === 'REPLAY_GAP')).toHaveLength(1);
    expectWellFormed(frames);
  }

  it('resuming from seq 1 after the early events expired yields REPLAY_GAP, then the retained events', async () => {
    const r = await sse(sseUrl(t, id, '&last_event_id=1'));
    expectGapThenTail(r.frames, 1);
    const byHeader = await sse(sseUrl(t, id), { headers: { 'Last-Event-ID': '3' } });
    expectGapThenTail(byHeader.frames, 3);
  });

  it('a fresh client (no resume point) is told about the expired events too', async () => {
    const r = await sse(sseUrl(t, id));
    expectGapThenTail(r.frames, 0);
  });

  it('resuming inside the retained window gives no gap', async () => {
    const after = total - 5;
    const r = await sse(sseUrl(t, id, `&last_event_id=${after}`));
    expect(r.frames.some((f) => f.event === 'REPLAY_GAP')).toBe(false);
    expect(seqs(eventsOf(r.frames))).toEqual(range(after + 1, total));
  });

  it('the ring of a live feed trims too: a late resume from 1 gets the gap', async () => {
    const live = await submit(t, { query: '[gate:gap-live] Another long one. Then more. And then done.', mode: 'complex' });
    const client = sse(sseUrl(t, live));
    await waitFor(async () => gw(t).hub.feeds.get(live)?.subscribers.size === 1);
    llm.gate('gap-live').open();
    const l = await client;
    expect(l.frames.some((f) => f.event === 'REPLAY_GAP')).toBe(false);
    // With a 16-event ring, a live client the machine cannot schedule fast enough may be
    // dropped (event: error) during a burst; whatever it did get is a contiguous prefix.
    const got = eventsOf(l.frames);
    expect(seqs(got)).toEqual(range(1, got.length));
    const history = await waitFor(async () => {
      const h = await json(await fetch(`${t.base}/api/v1/tasks/${live}`));
      return h.status === 'TASK_STATUS_COMPLETED' ? h : undefined;
    });
    expect(history.status).toBe('TASK_STATUS_COMPLETED');
    const all = l.frames.some((f) => f.event === 'error') ? range(1, gw(t).hub.feeds.get(live)!.lastSeq).map((seq) => ({ seq })) : got;
    expect(all.length).toBeGreaterThan(100);
    // The feed lingers after its client left; its ring now holds the last 16 events.
    expect(gw(t).hub.feeds.get(live)?.ring.length).toBe(16);
    const r = await sse(sseUrl(t, live, '&last_event_id=1'));
    expect(JSON.parse(r.frames[0].data)).toMatchObject({ type: 'REPLAY_GAP', requested_after: 1, first_available_seq: all.length - 15 });
    expect(seqs(eventsOf(r.frames))).toEqual(range(all.length - 15, all.length));
  });

  it('WebSocket sends the gap as a JSON message first', async () => {
    const r = await wsCollect(`ws://127.0.0.1:${t.app.gatewayPort}/api/v1/stream/ws?workflow_id=${id}&last_event_id=1`);
    expect(r.messages[0]).toMatchObject({ type: 'REPLAY_GAP', requested_after: 1 });
    const first = (r.messages[0] as unknown as { first_available_seq: number }).first_available_seq;
    expect(seqs(r.messages.slice(1))).toEqual(range(first, total));
    expect(r.code).toBe(1000);
  });
});

// --- heartbeats and inactivity ---------------------------------------------------------------

describe('heartbeat and inactivity (SSE_HEARTBEAT_SECONDS=1, SSE_INACTIVITY_SECONDS=2)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SSE_HEARTBEAT_SECONDS: '1', SSE_INACTIVITY_SECONDS: '2' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('sends heartbeat comments and closes a stream that never gets an event', async () => {
    const id = randomUUID();
    const r = await sse(sseUrl(t, id), { timeoutMs: 20_000 });
    expect(r.status).toBe(200);
    expect(r.closedByServer).toBe(true);
    expect(r.frames).toEqual([]);
    expect(r.comments.filter((c) => c === 'heartbeat').length).toBeGreaterThanOrEqual(1);
    expect(r.comments.at(-1)).toMatch(/closing after 2 seconds without events.*Last-Event-ID/);
    expect(sseSet(t).size).toBe(0);
  });

  it('sends no heartbeat to a stream that events keep busy, and one once it falls silent', async () => {
    const nc = await connect({ servers: t.natsUrl });
    const pub = new PipelinedPublisher(nc);
    try {
      const wf = randomUUID();
      const send = (seq: number, type: WorkflowEvent['type']) =>
        pub.publish(
          subjects.events(wf),
          encodeEvent({
            workflow_id: wf,
            seq,
            stream_id: streamId(Date.now(), seq),
            type,
            agent_id: 'hb',
            message: `event ${seq}`,
            timestamp: new Date().toISOString(),
          }),
          msgIdOf(wf, seq),
        );
      await send(1, 'WORKFLOW_STARTED');
      // What the client reads, in order: `e` an event, `c` a comment.
      const order: string[] = [];
      const res = await fetch(sseUrl(t, wf));
      const parser = createParser({ onEvent: () => order.push('e'), onComment: () => order.push('c') });
      const reading = (async () => {
        for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) parser.feed(chunk);
      })();
      // 2.4 s of events every 200 ms (heartbeats are due every 1 s), then 1.6 s of silence, then the end.
      for (let seq = 2; seq <= 13; seq++) {
        await sleep(200);
        await send(seq, 'LLM_PARTIAL');
      }
      await sleep(1600);
      await send(14, 'STREAM_END');
      await reading;
      // 13 events (the first and 12 partials) with no comment among them (the stream's opening comment before them); then at least one
      // heartbeat in the silence; then STREAM_END and `done`.
      const events = order.flatMap((x, i) => (x === 'e' ? [i] : []));
      expect(events).toHaveLength(15);
      expect(order.slice(events[0], events[12])).not.toContain('c');
      // 1.6 s of silence, heartbeats due 1 s after the last write: one, at most two (never one per half interval).
      const silent = order.slice(events[12], events[13]).filter((x) => x === 'c').length;
      expect(silent).toBeGreaterThanOrEqual(1);
      expect(silent).toBeLessThanOrEqual(2);
    } finally {
      pub.close();
      await nc.close();
    }
  });
});

// --- slow-client protection ------------------------------------------------------------------

describe('slow clients (STREAM_MAX_BUFFER_BYTES=1024)', () => {
  const llm = new TestLlm();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ STREAM_MAX_BUFFER_BYTES: '1024', PARTIAL_CHUNK_CHARS: '8192' }, { llm });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('drops a client that does not read while a normal client still gets everything', async () => {
    // 8 subtasks of 400 kB each: over 10 MB of events, more than the kernel buffers of a socket
    // nobody reads. Paced, so the normal client (in this process) keeps up.
    const id = await submit(t, { query: '[gate:slow-1] [big:400000] [pace] big output', mode: 'complex', max_concurrent_agents: 1 }); // one subtask at a time, as paced
    const slow = stalledClient(t, `/api/v1/stream/sse?workflow_id=${id}`);
    const feed = await waitFor(async () => {
      const f = gw(t).hub.feeds.get(id);
      return f?.subscribers.size === 1 ? f : undefined;
    });
    const slowSub = [...feed.subscribers][0];
    expect(sseSet(t).has(slowSub)).toBe(true);
    let slowGoneAtEnd: boolean | undefined;
    const normal = sse(sseUrl(t, id), {
      timeoutMs: 60_000,
      until: (f) => {
        if (f.event === 'STREAM_END') slowGoneAtEnd = !feed.subscribers.has(slowSub) && !sseSet(t).has(slowSub);
        return false;
      },
    });
    await waitFor(async () => feed.subscribers.size === 2);
    llm.gate('slow-1').open();
    const r = await normal;
    expectWellFormed(r.frames);
    const evs = eventsOf(r.frames);
    expect(seqs(evs)).toEqual(range(1, evs.length));
    expect(evs.at(-1)!.type).toBe('STREAM_END');
    expect(evs.filter((e) => e.type === 'LLM_OUTPUT')).toHaveLength(10);
    expect(r.frames.some((f) => f.event === 'error')).toBe(false);
    // The slow client was gone before the stream ended for the normal one.
    expect(slowGoneAtEnd).toBe(true);
    expect(sseSet(t).size).toBe(0);
    // What it was sent: a contiguous prefix, then the drop notice, and no done.
    const { head, body } = dechunk(await slow.drain());
    expect(head).toMatch(/^HTTP\/1\.1 200 OK/);
    const { seqs: got, others, frames } = sseBody(body);
    expect(others).toEqual([{ event: 'error', data: expect.stringMatching(/^\{"error":"client too slow/) }]);
    expect(frames.at(-1)).toBe(others[0]);
    expect(body.endsWith('\n\n')).toBe(true);
    expect(got.length).toBeGreaterThan(0);
    expect(got).toEqual(range(1, got.length));
    expect(got.length).toBeLessThan(evs.length);
    expect(body).not.toContain('event: done');
  }, 90_000);
});

// --- a client catching up after a stall --------------------------------------------------------

describe('catching up after a stall (STREAM_MAX_BUFFER_BYTES=32 MB, no heartbeats)', () => {
  const llm = new TestLlm();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ STREAM_MAX_BUFFER_BYTES: String(32 * 1024 * 1024), PARTIAL_CHUNK_CHARS: '8192', SSE_HEARTBEAT_SECONDS: '3600' }, { llm });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('a client that stalled and reads again gets everything while the workflow is quiet', async () => {
    const id = await submit(t, { query: '[gate:tail-go] [synth-gate:tail-hold] [big:400000] catch up', mode: 'complex' });
    // A first client keeps the feed; the workflow runs up to its synthesizer and waits there.
    const keeper = sse(sseUrl(t, id), { timeoutMs: 60_000, until: (f) => f.event === 'AGENT_STARTED' && JSON.parse(f.data).agent_id === 'synthesizer' });
    const feed = await waitFor(async () => {
      const f = gw(t).hub.feeds.get(id);
      return f?.subscribers.size === 1 ? f : undefined;
    });
    llm.gate('tail-go').open();
    const k = await keeper;
    const held = eventsOf(k.frames).at(-1)!;
    expect(held).toMatchObject({ type: 'AGENT_STARTED', agent_id: 'synthesizer' });
    expect(feed.lastSeq).toBe(held.seq);
    // A second client that does not read: the replay (over 10 MB, one write with this buffer
    // limit) stalls its socket, with most of it buffered in the server.
    const c = stalledClient(t, `/api/v1/stream/sse?workflow_id=${id}`);
    await waitFor(async () => [...feed.subscribers].find((s) => s.backpressured));
    // It reads again while no new event arrives: everything up to the held point must come through.
    c.resume();
    await waitFor(async () => c.received().includes(`"seq":${held.seq},`), 20_000, 50);
    expect(sseBody(dechunk(c.received().toString('utf8')).body).seqs).toEqual(range(1, held.seq));
    // Then the rest of the workflow, and the end.
    llm.gate('tail-hold').open();
    const { body } = dechunk(await c.drain());
    const { seqs: all, others } = sseBody(body);
    expect(all).toEqual(range(1, all.length));
    expect(all.length).toBeGreaterThan(held.seq);
    expect(others).toEqual([DONE]);
  }, 90_000);
});
