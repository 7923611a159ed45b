/**
 * Benchmark: the swarm (context.force_swarm).
 *
 * (a) Agent-to-agent message latency through the mailboxes: the real mailbox code
 *     (src/swarm Mailboxes.send into stream MAILBOXES, de-duplicated, stored by JetStream;
 *     the receiving agent's MailReader gets it), one message at a time, and 10 senders at once
 *     (each to its own receiver). Timed from the send call to the reader holding the message.
 *     Reference, same run: the same exchange through an in-memory mailbox (an array and a
 *     waiter woken on push: the best an in-process swarm can do; nothing survives a crash).
 * (b) Orchestration overhead per agent turn of a 10-agent swarm with a zero-latency model (an
 *     in-process provider answering at once): swarms run one at a time through the whole
 *     service (submission, the lead as a workflow with its journal, agents started through
 *     SWARM_AGENTS and run by the agent host with their own journals, mailboxes, task list and
 *     workspace in KV, events through the lead, PostgreSQL records), each agent taking K turns
 *     (turns 1..K-1 message the next agent with send_message, turn K answers).
 *     Overhead per turn = (swarm wall time - model busy time) / agent turns, at K = 5; also the
 *     marginal cost of a turn (the slope between K = 1 and K = 5, fixed costs cancel).
 *     Reference, same run: the same swarm in memory (bench/lib/swarm-mem.ts: the same agent
 *     loop on in-memory contexts and mailboxes). Target: < 2 ms a turn.
 *
 * Everything runs in one process (service and clients share the CPU), against a throwaway
 * nats-server and PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import type { JetStreamManager } from '@nats-io/jetstream';
import { Mailboxes, type Received } from '../src/swarm/index.js';
import { percentilesOf } from './lib/hist.js';
import { inProcessService, type Nats, type Pg } from './lib/infra.js';
import { fmtRatio, table, verdict } from './lib/report.js';
import { LoadWindow, waitQuiet } from './lib/sysload.js';
import { MemBox, SwarmModel, memorySwarm } from './lib/swarm-mem.js';

const AGENTS = 10;
const TURNS = 5;
const TARGET_MS = 2;

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

/** Sends `n` messages from `pairs` senders at once (each to its own receiver); latency of each (ms). */
async function mailboxLatency(mail: Mailboxes, n: number, pairs: number): Promise<number[]> {
  const wf = randomUUID();
  const out: number[] = [];
  await Promise.all(
    Array.from({ length: pairs }, async (_, p) => {
      const to = `agent-${2 * p + 2}`;
      const from = `agent-${2 * p + 1}`;
      const reader = await mail.reader(wf, to, 0);
      try {
        for (let i = 0; i < n; i++) {
          const t0 = performance.now();
          const got = (async () => {
            for (;;) {
              await reader.wait(10_000);
              const m = reader.take(1)[0] as Received | undefined;
              if (m) return performance.now();
            }
          })();
          await mail.send(wf, to, { kind: 'text', from, text: `message ${i}` }, `${wf}:${from}:bench:${i}`);
          out.push((await got) - t0);
        }
      } finally {
        reader.close();
      }
    }),
  );
  await mail.purge(wf);
  return out;
}

/** The same exchange through in-memory mailboxes. */
async function memoryLatency(n: number, pairs: number): Promise<number[]> {
  const out: number[] = [];
  await Promise.all(
    Array.from({ length: pairs }, async (_, p) => {
      const box = new MemBox<{ from: string; text: string }>();
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        const got = (async () => {
          for (;;) {
            await box.wait();
            if (box.take().length) return performance.now();
          }
        })();
        await Promise.resolve(box.push({ from: `agent-${p}`, text: `message ${i}` }));
        out.push((await got) - t0);
      }
    }),
  );
  return out;
}

/** Runs one swarm through the service and waits for its STREAM_END over SSE; its wall time (ms). */
async function serviceSwarm(base: string, turns: number): Promise<number> {
  const t0 = performance.now();
  const r = await fetch(`${base}/api/v1/tasks/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: `agents=${AGENTS} turns=${turns} #${randomUUID()}`, mode: 'standard', context: { force_swarm: true } }),
  });
  if (!r.ok) throw new Error(`swarm submission failed: ${r.status} ${await r.text()}`);
  const { workflow_id } = (await r.json()) as { workflow_id: string };
  const res = await fetch(`${base}/api/v1/stream/sse?workflow_id=${workflow_id}`);
  const reader = res.body!.getReader();
  let buf = '';
  const dec = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    if (buf.includes('event: STREAM_END') || buf.includes('event: done')) break;
  }
  await reader.cancel().catch(() => {});
  const wall = performance.now() - t0;
  const s = (await (await fetch(`${base}/api/v1/tasks/${workflow_id}`)).json()) as { status: string; error?: string; metadata?: { total_agents?: number } };
  if (s.status !== 'TASK_STATUS_COMPLETED' || s.metadata?.total_agents !== AGENTS) {
    throw new Error(`swarm ${workflow_id} did not complete with ${AGENTS} agents: ${s.status} ${s.error ?? ''}`);
  }
  return wall;
}

/** Every stream's last sequence: how many messages each has stored so far (JetStream writes). */
async function streamSeqs(jsm: JetStreamManager): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for await (const si of jsm.streams.list()) out.set(si.config.name, si.state.last_seq);
  return out;
}

/** JetStream writes of one swarm of `turns` turns per agent, by stream (most first). */
async function writesOf(jsm: JetStreamManager, run: () => Promise<unknown>): Promise<{ total: number; byStream: [string, number][] }> {
  const a = await streamSeqs(jsm);
  await run();
  // The archiver and the events' consumers may still be writing: wait for the counts to settle.
  let b = await streamSeqs(jsm);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const c = await streamSeqs(jsm);
    if ([...c].every(([k, v]) => b.get(k) === v)) break;
    b = c;
  }
  const byStream = [...b].map(([k, v]): [string, number] => [k, v - (a.get(k) ?? 0)]).filter(([, d]) => d > 0);
  byStream.sort((x, y) => y[1] - x[1]);
  return { total: byStream.reduce((n, [, d]) => n + d, 0), byStream };
}

interface Sample {
  wallMs: number;
  modelMs: number;
  agentTurns: number;
}

async function sample(model: SwarmModel, run: () => Promise<number>, log?: (s: string) => void): Promise<Sample> {
  const [b0, t0] = [model.busyMs, model.agentTurns];
  const wallMs = await run();
  const s = { wallMs, modelMs: model.busyMs - b0, agentTurns: model.agentTurns - t0 };
  log?.(`  swarm of ${s.agentTurns} agent turns: ${wallMs.toFixed(0)} ms`);
  return s;
}

/** Median per-turn overhead at K = TURNS, and the marginal cost of a turn (slope K = 1 -> TURNS). */
function perTurn(k1: Sample[], kN: Sample[]) {
  const overhead = median(kN.map((s) => (s.wallMs - s.modelMs) / s.agentTurns));
  const wall1 = median(k1.map((s) => s.wallMs - s.modelMs));
  const wallN = median(kN.map((s) => s.wallMs - s.modelMs));
  const marginal = (wallN - wall1) / (AGENTS * (TURNS - 1));
  return {
    overheadMs: overhead,
    marginalMs: marginal,
    wallK1Ms: wall1,
    wallKnMs: wallN,
    turns: kN[0]?.agentTurns ?? 0,
    modelMs: median(kN.map((s) => s.modelMs)),
  };
}

export async function runSwarm(o: { nats: Nats; pg: Pg; quick: boolean; log: (s: string) => void }) {
  const model = new SwarmModel(AGENTS);
  const { app, base } = await inProcessService(o.nats, o.pg, 'bench_swarm', model);
  const n = o.quick ? 300 : 1000;
  const reps = o.quick ? 3 : 6;
  const load = new LoadWindow();
  try {
    const mail = new Mailboxes(app.bus.js, app.bus.jsm, app.bus.events);
    o.log('swarm: mailbox latency (warm-up)');
    await mailboxLatency(mail, 100, 1);
    await memoryLatency(1000, 1);
    await waitQuiet(15, 10_000, o.log);
    o.log(`swarm: mailbox latency, ${n} messages one at a time, then ${n} from each of 10 senders`);
    const one = percentilesOf(await mailboxLatency(mail, n, 1));
    const memOne = percentilesOf(await memoryLatency(n, 1));
    const ten = percentilesOf(await mailboxLatency(mail, n, 10));
    const memTen = percentilesOf(await memoryLatency(n, 10));

    o.log(`swarm: ${AGENTS}-agent swarms, zero-latency model (warm-up)`);
    for (let i = 0; i < 2; i++) {
      await serviceSwarm(base, TURNS);
      await memorySwarm(model, AGENTS, TURNS);
    }
    await waitQuiet(15, 10_000, o.log);
    o.log(`swarm: ${reps} swarms each of K = 1 and K = ${TURNS} turns per agent, through the service and in memory`);
    const svc = { k1: [] as Sample[], kN: [] as Sample[] };
    const mem = { k1: [] as Sample[], kN: [] as Sample[] };
    for (let i = 0; i < reps; i++) {
      svc.k1.push(await sample(model, () => serviceSwarm(base, 1), o.log));
      svc.kN.push(await sample(model, () => serviceSwarm(base, TURNS), o.log));
    }
    for (let i = 0; i < reps * 5; i++) {
      mem.k1.push(await sample(model, () => memorySwarm(model, AGENTS, 1)));
      mem.kN.push(await sample(model, () => memorySwarm(model, AGENTS, TURNS)));
    }
    const w1 = await writesOf(app.bus.jsm, () => serviceSwarm(base, 1));
    const wN = await writesOf(app.bus.jsm, () => serviceSwarm(base, TURNS));
    const writesPerTurn = (wN.total - w1.total) / (AGENTS * (TURNS - 1));
    const s = perTurn(svc.k1, svc.kN);
    const m = perTurn(mem.k1, mem.kN);
    const machine = load.stop();
    o.log(`swarm: service K=${TURNS} swarm ${s.wallKnMs.toFixed(1)} ms (${s.turns} agent turns), in memory ${m.wallKnMs.toFixed(2)} ms`);

    const lat = (p: ReturnType<typeof percentilesOf>) => ({ p50: p.p50, p99: p.p99, max: p.max, count: p.count });
    const results = {
      mailboxLatencyMs: { oneAtATime: lat(one), tenSenders: lat(ten), reference: { oneAtATime: lat(memOne), tenSenders: lat(memTen) } },
      overhead: { agents: AGENTS, turnsPerAgent: TURNS, reps, service: s, reference: m, targetMs: TARGET_MS, met: s.overheadMs < TARGET_MS },
      jetstreamWrites: { swarmK1: w1, swarmKn: wN, perExtraAgentTurn: writesPerTurn },
      foreignLoadPctOfCore: machine.foreignPct,
      loadAverage1m: loadavg()[0],
    };
    const ms = (x: number, d = 3) => x.toFixed(d);
    const report =
      table(
        'Swarm mailboxes: agent-to-agent message latency (send -> the receiver\u2019s reader holds it)',
        ['measure', 'mailboxes (JetStream)', 'in-memory mailbox (reference)', 'ratio'],
        [
          ['one at a time, p50 (ms)', ms(one.p50), ms(memOne.p50, 4), fmtRatio(one.p50 / memOne.p50)],
          ['one at a time, p99 (ms)', ms(one.p99), ms(memOne.p99, 4), fmtRatio(one.p99 / memOne.p99)],
          ['10 senders at once, p50 (ms)', ms(ten.p50), ms(memTen.p50, 4), fmtRatio(ten.p50 / memTen.p50)],
          ['10 senders at once, p99 (ms)', ms(ten.p99), ms(memTen.p99, 4), fmtRatio(ten.p99 / memTen.p99)],
        ],
        [`${one.count} + ${ten.count} messages; each send is stored by JetStream (de-duplicated by its id) before it counts as sent.`],
      ) +
      table(
        `${AGENTS}-agent swarm, zero-latency model, one swarm at a time (whole service vs. the same swarm in memory)`,
        ['measure', 'service', 'in memory (reference)', 'ratio', 'target'],
        [
          [
            `overhead per agent turn, K = ${TURNS} (ms)`,
            ms(s.overheadMs),
            ms(m.overheadMs, 4),
            fmtRatio(s.overheadMs / m.overheadMs),
            `< ${TARGET_MS} ms: ${verdict(s.overheadMs < TARGET_MS)}`,
          ],
          [`marginal cost of a turn, slope K = 1 -> ${TURNS} (ms)`, ms(s.marginalMs), ms(m.marginalMs, 4), fmtRatio(s.marginalMs / m.marginalMs), ''],
          [
            `swarm wall time - model time, K = ${TURNS} (${s.turns} agent turns) (ms)`,
            ms(s.wallKnMs, 1),
            ms(m.wallKnMs, 2),
            fmtRatio(s.wallKnMs / m.wallKnMs),
            '',
          ],
          ['swarm wall time - model time, K = 1 (ms)', ms(s.wallK1Ms, 1), ms(m.wallK1Ms, 2), fmtRatio(s.wallK1Ms / m.wallK1Ms), ''],
          [`model busy time, K = ${TURNS} (ms)`, ms(s.modelMs), ms(m.modelMs, 4), '', ''],
          [`JetStream writes per swarm, K = 1 / K = ${TURNS}`, `${w1.total} / ${wN.total}`, '0 / 0', '', ''],
          ['JetStream writes per added agent turn (slope)', writesPerTurn.toFixed(1), '0', '', ''],
        ],
        [
          `overhead per turn = (wall time - model busy time) / agent turns (${AGENTS} agents x K turns, run in parallel), median of ${reps} swarms (${reps * 5} in memory);`,
          'the service\u2019s wall time runs from POST /api/v1/tasks/stream to STREAM_END on SSE and includes the plan, recruiting, synthesis and the end of the task.',
          `JetStream writes of the K = ${TURNS} swarm by stream: ${wN.byStream.map(([k, d]) => `${k} ${d}`).join(', ')}.`,
          `other processes on the machine used ${machine.foreignPct}% of a core on average during the run; 1-minute load average at the end ${loadavg()[0]!.toFixed(1)}.`,
        ],
      ) +
      '\n';
    return { results, report };
  } finally {
    await app.stop();
  }
}
