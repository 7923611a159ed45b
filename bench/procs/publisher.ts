/**
 * Publisher process for the fan-out benchmark: publishes workflow events to JetStream exactly
 * as workers do (`js.publish(svc.events.<wf>, encodeEvent(ev), { msgID: msgIdOf(wf, seq) })`),
 * seq 1, 2, 3, ... per workflow, in bursts of `burst` events per workflow per turn; each event
 * carries its publish time in `payload.pt` (µs, monotonic clock).
 *
 * Modes:
 * - saturate: closed loop. The runner relays the clients' progress (per workflow, the fewest
 *   events any open client has received); a workflow gets its next burst only while
 *   published - received <= window. This finds the rate the whole pipeline sustains without
 *   the gateway dropping anyone (its ring holds 1,000 events per workflow).
 * - rate: a fixed number of events per second per workflow, phases spread across workflows.
 * Publishes are pipelined (acks awaited asynchronously), at most MAX_INFLIGHT unacked.
 *
 * `--publish=raw` (bench flag) publishes the same message with the same Nats-Msg-Id header
 * through core NATS with a reply subject on one shared inbox subscription, i.e. still stored
 * and acknowledged by JetStream, but without nats.js's per-request bookkeeping in js.publish
 * (measured here at ~75 µs of CPU per message against ~15 µs): for when the publisher, not the
 * gateway, would be the bottleneck.
 */
import { connect, createInbox, headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { encodeEvent, msgIdOf, subjects } from '../../src/bus/index.js';
import { benchEvent } from '../lib/frames.js';
import { nowUs, serve } from '../lib/ipc.js';
import { RateScheduler } from '../lib/schedule.js';

const MAX_INFLIGHT = 20_000;

let nc: NatsConnection | undefined;
let js: JetStreamClient | undefined;
let wfs: string[] = [];
let subj: string[] = [];
let seq: number[] = [];
let mins: number[] = [];
let burst = 10;
let window = 300;
let inflight = 0;
let published = 0;
let acked = 0;
let failed = 0;
let lastError = '';
let mode: 'idle' | 'saturate' | 'rate' = 'idle';
let scheduler: RateScheduler | undefined;
let wake: (() => void) | undefined;
let raw = false;
let inbox = '';
let replySeq = 0;

function onRawAck(data: Uint8Array): void {
  inflight--;
  // A JetStream ack is {"stream":..,"seq":..}; an error is {"error":{..}}.
  if (data.length > 9 && data[2] === 101 /* e */ && data[3] === 114 /* r */) {
    failed++;
    lastError = new TextDecoder().decode(data);
  } else acked++;
}

function publishBurst(i: number): void {
  const wf = wfs[i];
  for (let k = 0; k < burst; k++) {
    const s = ++seq[i];
    const ev = benchEvent(wf, s, nowUs());
    inflight++;
    published++;
    if (raw) {
      const h = headers();
      h.set('Nats-Msg-Id', msgIdOf(wf, s));
      nc!.publish(subj[i], encodeEvent(ev), { headers: h, reply: `${inbox}.${++replySeq}` });
      continue;
    }
    js!.publish(subj[i], encodeEvent(ev), { msgID: msgIdOf(wf, s) }).then(
      () => {
        inflight--;
        acked++;
      },
      (err: Error) => {
        inflight--;
        failed++;
        lastError = err.message;
      },
    );
  }
}

function saturateLoop(): void {
  if (mode !== 'saturate') return;
  let any = false;
  if (inflight < MAX_INFLIGHT) {
    for (let i = 0; i < wfs.length; i++) {
      if (mins[i] < 0) continue; // no open client on this workflow
      if (seq[i] + burst - mins[i] <= window) {
        publishBurst(i);
        any = true;
      }
    }
  }
  if (any) setImmediate(saturateLoop);
  else {
    // Nothing allowed: wait for the next progress report (or 2 ms), do not spin.
    const t = setTimeout(() => {
      wake = undefined;
      saturateLoop();
    }, 2);
    wake = () => {
      clearTimeout(t);
      wake = undefined;
      setImmediate(saturateLoop);
    };
  }
}

process.on('message', (m: { ev?: string; data?: number[] }) => {
  if (m && m.ev === 'progress' && Array.isArray(m.data)) {
    mins = m.data;
    wake?.();
  }
});

function stop(): void {
  mode = 'idle';
  scheduler?.stop();
  scheduler = undefined;
}

serve(
  {
    async connect(a: { url: string; raw?: boolean }) {
      nc = await connect({ servers: a.url, name: 'bench-publisher', noAsyncTraces: true }); // as the workers' bus
      js = jetstream(nc);
      raw = !!a.raw;
      inbox = createInbox();
      nc.subscribe(`${inbox}.*`, { callback: (_err, m) => onRawAck(m.data) });
      await nc.flush();
      return true;
    },
    setup(a: { workflows: string[]; burst: number; window: number }) {
      stop();
      wfs = a.workflows;
      subj = wfs.map((w) => subjects.events(w));
      seq = wfs.map(() => 0);
      mins = wfs.map(() => 0);
      burst = a.burst;
      window = a.window;
      published = acked = failed = 0;
      return true;
    },
    saturate() {
      stop();
      mode = 'saturate';
      saturateLoop();
      return true;
    },
    rate(a: { eventsPerSecPerWf: number }) {
      stop();
      mode = 'rate';
      scheduler = new RateScheduler(wfs.length, a.eventsPerSecPerWf / burst, (i) => {
        if (inflight < MAX_INFLIGHT) publishBurst(i);
      });
      scheduler.start();
      return true;
    },
    /** Stops publishing and waits (bounded) for outstanding acks. */
    async stop() {
      stop();
      const end = Date.now() + 10_000;
      while (inflight > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      return { published, acked, failed, inflight, lastError, seq };
    },
    counts() {
      return { published, acked, failed, inflight, seq };
    },
  },
  () => void nc?.close(),
);
