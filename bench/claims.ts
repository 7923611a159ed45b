/**
 * Benchmark: daemon claim arbitration. Ten competing connections (each its own NATS
 * connection, as ten gateway processes would have) claim every message at once; the first
 * wins by an atomic create in the DAEMON_CLAIMS bucket (src/daemon/claims.ts). Reported:
 * messages arbitrated per second, claim attempts per second, the claim latency (attempt to
 * answer) p50/p99, and that every message was granted exactly once. Reference in the same
 * run: the same arbitration in PostgreSQL (ten pooled connections racing an INSERT ... ON
 * CONFLICT DO NOTHING on the message id, the usual way to do claim-once in a database).
 * Target: at least 10,000 messages arbitrated per second.
 */
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import postgres from 'postgres';
import { ClaimBoard } from '../src/daemon/index.js';
import type { Nats, Pg } from './lib/infra.js';
import { percentilesOf } from './lib/hist.js';
import { fmtInt, fmtRatio, table, verdict } from './lib/report.js';

const COMPETITORS = 10;

interface Run {
  messages: number;
  seconds: number;
  attempts: number;
  latMs: number[];
  exactlyOnce: boolean;
}

async function race(n: number, concurrency: number, attempt: (id: string, who: number) => Promise<boolean>): Promise<Run> {
  const ids = Array.from({ length: n }, () => randomUUID());
  const grants = new Array<number>(n).fill(0);
  const latMs: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        await Promise.all(
          Array.from({ length: COMPETITORS }, async (_, w) => {
            const s = performance.now();
            const ok = await attempt(ids[i]!, w);
            latMs.push(performance.now() - s);
            if (ok) grants[i]!++;
          }),
        );
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return { messages: n, seconds, attempts: n * COMPETITORS, latMs, exactlyOnce: grants.every((g) => g === 1) };
}

export async function runClaims(o: { nats: Nats; pg: Pg; quick: boolean; log: (s: string) => void }) {
  const n = o.quick ? 2000 : 10_000;
  const inFlight = 64; // messages being arbitrated at once
  const conns: NatsConnection[] = [];
  for (let i = 0; i < COMPETITORS; i++) conns.push(await connect({ servers: o.nats.url }));
  let kvRun: Run;
  try {
    const boards = await Promise.all(conns.map((nc) => ClaimBoard.open(nc, { ttlSeconds: 60 })));
    const meta = (w: number) => ({ conn_id: `conn-${w}`, timestamp: new Date().toISOString() });
    await race(200, inFlight, (id, w) => boards[w]!.claim(id, meta(w))); // warm-up
    o.log(`claims: ${n} messages x ${COMPETITORS} competitors through NATS KV`);
    kvRun = await race(n, inFlight, (id, w) => boards[w]!.claim(id, meta(w)));
  } finally {
    await Promise.all(conns.map((c) => c.close()));
  }
  const sql = postgres(await o.pg.database('bench_claims'), { max: COMPETITORS, onnotice: () => {} });
  let pgRun: Run;
  try {
    await sql`CREATE TABLE claims (message_id uuid PRIMARY KEY, conn_id text NOT NULL, at timestamptz NOT NULL DEFAULT now())`;
    const attempt = async (id: string, w: number) =>
      (await sql`INSERT INTO claims (message_id, conn_id) VALUES (${id}, ${`conn-${w}`}) ON CONFLICT DO NOTHING`).count === 1;
    await race(200, inFlight, attempt);
    o.log(`claims: ${n} messages x ${COMPETITORS} competitors through PostgreSQL`);
    pgRun = await race(n, inFlight, attempt);
  } finally {
    await sql.end({ timeout: 2 });
  }
  const kvP = percentilesOf(kvRun.latMs);
  const pgP = percentilesOf(pgRun.latMs);
  const kvRate = kvRun.messages / kvRun.seconds;
  const pgRate = pgRun.messages / pgRun.seconds;
  const results = {
    competitors: COMPETITORS,
    messages: n,
    kv: {
      messagesPerSecond: kvRate,
      attemptsPerSecond: kvRun.attempts / kvRun.seconds,
      latencyMs: { p50: kvP.p50, p99: kvP.p99 },
      exactlyOnce: kvRun.exactlyOnce,
    },
    postgres: {
      messagesPerSecond: pgRate,
      attemptsPerSecond: pgRun.attempts / pgRun.seconds,
      latencyMs: { p50: pgP.p50, p99: pgP.p99 },
      exactlyOnce: pgRun.exactlyOnce,
    },
  };
  const report =
    table(
      `Daemon claim arbitration: ${fmtInt(n)} messages, ${COMPETITORS} competing connections each, ${inFlight} messages in flight`,
      ['measure', 'NATS KV (service)', 'PostgreSQL (reference)', 'ratio', 'target'],
      [
        ['messages arbitrated / s', fmtInt(kvRate), fmtInt(pgRate), fmtRatio(kvRate / pgRate), `>= 10,000: ${verdict(kvRate >= 10_000)}`],
        ['claim attempts / s', fmtInt(kvRun.attempts / kvRun.seconds), fmtInt(pgRun.attempts / pgRun.seconds), '', ''],
        ['claim latency p50 / p99 (ms)', `${kvP.p50.toFixed(2)} / ${kvP.p99.toFixed(2)}`, `${pgP.p50.toFixed(2)} / ${pgP.p99.toFixed(2)}`, '', ''],
        ['exactly one grant per message', kvRun.exactlyOnce ? 'yes' : 'NO', pgRun.exactlyOnce ? 'yes' : 'NO', '', verdict(kvRun.exactlyOnce)],
      ],
      ['every attempt is one round trip to the arbiter (JetStream create with an expected last sequence; an INSERT on a primary key).'],
    ) + '\n';
  return { results, report };
}
