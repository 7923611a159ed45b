/**
 * Benchmark: daemon dispatch and claim arbitration. Three measurements of claim-once
 * arbitration, every one with ten competing daemon connections per message:
 *
 * - hub (the service path): two gateway processes modelled in this process, each with its own
 *   NATS connection, ClaimBoard and DaemonHub (src/daemon/hub.ts) and five in-memory daemon
 *   sockets of one owner. Messages are dispatched through `DaemonHub.dispatch`, alternating
 *   between the two hubs; every socket claims every message as soon as its `message` frame
 *   arrives (`hub.handle(conn, {type: 'claim'})` on its own hub) and takes the `claim_ack`.
 *   Reported: dispatch latency (dispatch call to the `message` frame at each socket), claims
 *   arbitrated per second (claim_acks / elapsed), messages per second (messages with all ten
 *   acks / elapsed), claim latency (claim handed to the hub to its claim_ack), board attempts
 *   (KV creates) per message, and that every message was granted exactly once.
 * - ClaimBoard direct: ten NATS connections, each its own ClaimBoard (src/daemon/claims.ts),
 *   race an atomic create in the DAEMON_CLAIMS bucket for every message.
 * - PostgreSQL (reference, same run): ten pooled connections race an INSERT ... ON CONFLICT DO
 *   NOTHING on the message id, the usual way to do claim-once in a database.
 *
 * Target: at least 10,000 claims arbitrated per second through the hub.
 */
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import postgres from 'postgres';
import { ClaimBoard, DaemonHub, newConnId, type DaemonMessage, type DaemonSocket, type Owner } from '../src/daemon/index.js';
import { createLogger } from '../src/kernel/index.js';
import type { Nats, Pg } from './lib/infra.js';
import { percentilesOf, type Percentiles } from './lib/hist.js';
import { fmtInt, fmtRatio, table, verdict } from './lib/report.js';

const COMPETITORS = 10;
const GATEWAYS = 2;
const SOCKETS_PER_GATEWAY = COMPETITORS / GATEWAYS;
/** A hub message not answered by all its sockets within this is counted as lost (the run goes on). */
const MESSAGE_DEADLINE_MS = 15_000;

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

/** One dispatched message as the hub measurement follows it. */
interface Track {
  /** When the dispatch call started. */
  t0: number;
  /** Socket id -> when its claim was handed to its hub. */
  claimAt: Map<string, number>;
  acks: number;
  grants: number;
  /** ClaimBoard attempts (KV creates) made for it, both gateways together. */
  boardAttempts: number;
  done: () => void;
}

interface HubRun {
  messages: number;
  /** Messages that got all ten claim_acks. */
  completed: number;
  seconds: number;
  /** claim_acks received. */
  answered: number;
  dispatchMs: number[];
  claimMs: number[];
  grantedMs: number[];
  boardAttempts: number;
  maxBoardAttempts: number;
  exactlyOnce: boolean;
  /** Failed dispatch or handle calls, sockets the hub closed, frames received twice. */
  errors: number;
}

type Frame = { type?: string; message_id?: string; payload?: { granted?: boolean } };

/** Two gateways (own NATS connection, ClaimBoard and DaemonHub each) with five in-memory daemon sockets each, all of one owner. */
class HubRig {
  private readonly conns: NatsConnection[] = [];
  private readonly hubs: DaemonHub[] = [];
  private readonly tracks = new Map<string, Track>();
  private readonly owner: Owner = { tenantId: null, userId: randomUUID() };
  private cur = HubRig.fresh();

  private static fresh() {
    return { dispatchMs: [] as number[], claimMs: [] as number[], grantedMs: [] as number[], answered: 0, boardAttempts: 0, errors: 0 };
  }

  static async open(url: string): Promise<HubRig> {
    const rig = new HubRig();
    try {
      const log = createLogger({ level: 'silent' });
      for (let g = 0; g < GATEWAYS; g++) {
        // As the service's bus connects (src/bus): no stack captured per request.
        const nc = await connect({ servers: url, noAsyncTraces: true });
        rig.conns.push(nc);
        const board = await ClaimBoard.open(nc, { ttlSeconds: 60 });
        // Counts the hub's board attempts (one KV create each); the attempt itself is unchanged.
        const claim = board.claim.bind(board);
        board.claim = (id, meta) => {
          rig.cur.boardAttempts++;
          const t = rig.tracks.get(id);
          if (t) t.boardAttempts++;
          return claim(id, meta);
        };
        const hub = await DaemonHub.start(nc, board, { claimTtlSeconds: 60, pendingTtlSeconds: 600 }, log);
        rig.hubs.push(hub);
        for (let s = 0; s < SOCKETS_PER_GATEWAY; s++) hub.connect(rig.socket(hub));
      }
    } catch (err) {
      await rig.close();
      throw err;
    }
    return rig;
  }

  private socket(hub: DaemonHub): DaemonSocket {
    const id = newConnId();
    return {
      id,
      owner: this.owner,
      send: (frame) => {
        this.frame(hub, id, frame as Frame);
        return true;
      },
      close: () => {
        this.cur.errors++;
      },
    };
  }

  private frame(hub: DaemonHub, sockId: string, f: Frame): void {
    const now = performance.now();
    const t = f.message_id ? this.tracks.get(f.message_id) : undefined;
    if (!t) return; // `connected`, or a frame of an earlier run
    const cur = this.cur;
    if (f.type === 'message') {
      if (t.claimAt.has(sockId)) {
        cur.errors++; // offered twice
        return;
      }
      cur.dispatchMs.push(now - t.t0);
      t.claimAt.set(sockId, NaN);
      // A daemon answering at once, but not inside the hub's send.
      queueMicrotask(() => {
        t.claimAt.set(sockId, performance.now());
        hub.handle(sockId, JSON.stringify({ type: 'claim', message_id: f.message_id })).catch(() => cur.errors++);
      });
    } else if (f.type === 'claim_ack') {
      const ms = now - (t.claimAt.get(sockId) ?? NaN);
      cur.claimMs.push(ms);
      cur.answered++;
      t.acks++;
      if (f.payload?.granted === true) {
        t.grants++;
        cur.grantedMs.push(ms);
      }
      if (t.acks === COMPETITORS) t.done();
    }
  }

  /** Dispatches n messages, alternating between the hubs, `concurrency` at once (each until all ten sockets have their claim_ack). */
  async run(n: number, concurrency: number): Promise<HubRun> {
    const cur = (this.cur = HubRig.fresh());
    this.tracks.clear();
    let next = 0;
    let completed = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) {
          const i = next++;
          const hub = this.hubs[i % this.hubs.length]!;
          const msg: DaemonMessage = {
            message_id: randomUUID(),
            channel: 'platform_a',
            thread_id: `bench-${randomUUID()}`,
            sender: 'bench-user',
            text: `bench message ${i}`,
            timestamp: new Date().toISOString(),
          };
          let timer: NodeJS.Timeout | undefined;
          const finished = new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), MESSAGE_DEADLINE_MS);
            this.tracks.set(msg.message_id, { t0: performance.now(), claimAt: new Map(), acks: 0, grants: 0, boardAttempts: 0, done: () => resolve(true) });
          });
          try {
            await hub.dispatch(msg, this.owner);
          } catch {
            cur.errors++;
          }
          if (await finished) completed++;
          clearTimeout(timer);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const tracks = [...this.tracks.values()];
    return {
      messages: n,
      completed,
      seconds,
      answered: cur.answered,
      dispatchMs: cur.dispatchMs,
      claimMs: cur.claimMs,
      grantedMs: cur.grantedMs,
      boardAttempts: cur.boardAttempts,
      maxBoardAttempts: Math.max(0, ...tracks.map((t) => t.boardAttempts)),
      exactlyOnce: tracks.length === n && tracks.every((t) => t.grants === 1 && t.acks === COMPETITORS),
      errors: cur.errors,
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.hubs.map((h) => h.stop()));
    await Promise.all(this.conns.map((c) => c.close()));
  }
}

const ms2 = (p: Percentiles) => `${p.p50.toFixed(2)} / ${p.p99.toFixed(2)}`;

export async function runClaims(o: { nats: Nats; pg: Pg; quick: boolean; log: (s: string) => void }) {
  const n = o.quick ? 2000 : 10_000;
  const inFlight = 64; // messages being arbitrated at once
  const conns: NatsConnection[] = [];
  for (let i = 0; i < COMPETITORS; i++) conns.push(await connect({ servers: o.nats.url, noAsyncTraces: true }));
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
  const rig = await HubRig.open(o.nats.url);
  let hubRun: HubRun;
  try {
    await rig.run(200, inFlight); // warm-up
    o.log(`claims: ${n} messages x ${COMPETITORS} daemon sockets (${GATEWAYS} gateways x ${SOCKETS_PER_GATEWAY}) through the daemon hub`);
    hubRun = await rig.run(n, inFlight);
  } finally {
    await rig.close();
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
  const hubDispatchP = percentilesOf(hubRun.dispatchMs);
  const hubClaimP = percentilesOf(hubRun.claimMs);
  const hubGrantedP = percentilesOf(hubRun.grantedMs);
  const kvRate = kvRun.messages / kvRun.seconds;
  const pgRate = pgRun.messages / pgRun.seconds;
  const kvClaims = kvRun.attempts / kvRun.seconds;
  const pgClaims = pgRun.attempts / pgRun.seconds;
  const hubRate = hubRun.completed / hubRun.seconds;
  const hubClaims = hubRun.answered / hubRun.seconds;
  const hubBoardPerMessage = hubRun.boardAttempts / hubRun.messages;
  const results = {
    competitors: COMPETITORS,
    messages: n,
    hub: {
      gateways: GATEWAYS,
      socketsPerGateway: SOCKETS_PER_GATEWAY,
      messagesPerSecond: hubRate,
      attemptsPerSecond: hubClaims,
      dispatchLatencyMs: { p50: hubDispatchP.p50, p99: hubDispatchP.p99 },
      latencyMs: { p50: hubClaimP.p50, p99: hubClaimP.p99 },
      grantedLatencyMs: { p50: hubGrantedP.p50, p99: hubGrantedP.p99 },
      boardAttemptsPerMessage: hubBoardPerMessage,
      maxBoardAttemptsPerMessage: hubRun.maxBoardAttempts,
      completed: hubRun.completed,
      errors: hubRun.errors,
      exactlyOnce: hubRun.exactlyOnce,
    },
    kv: {
      messagesPerSecond: kvRate,
      attemptsPerSecond: kvClaims,
      latencyMs: { p50: kvP.p50, p99: kvP.p99 },
      exactlyOnce: kvRun.exactlyOnce,
    },
    postgres: {
      messagesPerSecond: pgRate,
      attemptsPerSecond: pgClaims,
      latencyMs: { p50: pgP.p50, p99: pgP.p99 },
      exactlyOnce: pgRun.exactlyOnce,
    },
  };
  const yes = (ok: boolean) => (ok ? 'yes' : 'NO');
  const report =
    table(
      `Daemon dispatch and claim arbitration: ${fmtInt(n)} messages, ${COMPETITORS} competing connections each, ${inFlight} messages in flight`,
      ['measure', `daemon hub (${GATEWAYS} gateways x ${SOCKETS_PER_GATEWAY})`, 'ClaimBoard direct', 'PostgreSQL (reference)', 'ratio (hub / PG)', 'target'],
      [
        [
          'claims arbitrated / s',
          fmtInt(hubClaims),
          fmtInt(kvClaims),
          fmtInt(pgClaims),
          fmtRatio(hubClaims / pgClaims),
          `>= 10,000: ${verdict(hubClaims >= 10_000)}`,
        ],
        ['messages arbitrated / s', fmtInt(hubRate), fmtInt(kvRate), fmtInt(pgRate), fmtRatio(hubRate / pgRate), ''],
        ['dispatch latency p50 / p99 (ms)', ms2(hubDispatchP), '', '', '', ''],
        ['claim latency p50 / p99 (ms)', ms2(hubClaimP), ms2(kvP), ms2(pgP), '', ''],
        ['granted claim latency p50 / p99 (ms)', ms2(hubGrantedP), '', '', '', ''],
        ['arbiter writes per message', `${hubBoardPerMessage.toFixed(2)} (max ${hubRun.maxBoardAttempts})`, String(COMPETITORS), String(COMPETITORS), '', ''],
        [
          'exactly one grant per message',
          `${yes(hubRun.exactlyOnce)} (${fmtInt(hubRun.completed)}/${fmtInt(n)} answered in full, ${hubRun.errors} errors)`,
          yes(kvRun.exactlyOnce),
          yes(pgRun.exactlyOnce),
          '',
          verdict(hubRun.exactlyOnce && kvRun.exactlyOnce && hubRun.errors === 0),
        ],
      ],
      [
        `daemon hub: ${GATEWAYS} gateways in this process, each its own NATS connection, ClaimBoard and DaemonHub with ${SOCKETS_PER_GATEWAY} in-memory daemon sockets of one owner;`,
        '  dispatch alternates between the hubs and reaches all ten sockets; every socket claims every message as soon as its frame arrives.',
        'A hub arbitrates the claims of its own sockets for one message with one board attempt (gateway-local single flight: the other local',
        `  claimants wait for its outcome, no round trip of their own), so ${COMPETITORS} connections on ${GATEWAYS} gateways make at most ${GATEWAYS} KV creates per message;`,
        '  the granted row is the board path. Each dispatch also puts DAEMON_PENDING (the durable record) and requests the owner subject;',
        '  a claim within the claim TTL of dispatch reads no KV (the gateway remembers what it offered); thread affinity is a core-NATS broadcast.',
        '  So 3 JetStream writes per message in all; claims/s counts every answered claim (10 per message), messages/s every arbitrated message.',
        'dispatch latency: dispatch call to the `message` frame at each socket (all ten); claim latency: claim handed to the hub to its claim_ack.',
        'ClaimBoard direct / PostgreSQL: every attempt is one round trip to the arbiter (JetStream create with an expected last sequence; an INSERT on a primary key).',
      ],
    ) + '\n';
  return { results, report };
}
