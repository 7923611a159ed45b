/**
 * The daemon side of the load: a platform_a channel whose signed webhooks arrive at a steady
 * rate through the gateways, daemon clients on the daemon WebSocket (`/v1/ws/messages`) that
 * claim every message offered and reply at once when granted, and a local stand-in for the
 * platform's API (PLATFORM_A_API_URL) that records the replies the service posts. A daemon
 * whose gateway dies reconnects through the next one. Claims go to a ClaimLedger, which tells
 * a double grant from a re-offer after the holder's gateway died.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { ClaimLedger } from './checks.js';
import type { Gateways } from './http.js';

const SIGNING_SECRET = 'drill-signing-secret';
/** The platform_a channel credentials the drill (and the scale benchmark) create their channel with. */
export const CREDS = { signing_secret: SIGNING_SECRET, bot_token: 'xoxb-drill', app_id: 'ADRILL' };
/** A holder whose connection closed this soon after its grant lost the claim with its gateway. */
const LOST_HOLDER_MS = 5_000;

export interface DaemonTally {
  /** Webhooks answered `dispatched`. */
  dispatched: number;
  /** Of those, replies the platform received (once or more). */
  answered: number;
  /** Dispatched messages with no reply posted by the end. */
  unanswered: number;
  /** Threads the platform got more than one reply for (posting is at least once). */
  answeredTwice: number;
  granted: number;
  doubleGrants: number;
  /** The first double grants: message, then each grant's connection and time. */
  doubleGrantExamples: string[];
  regrantsAfterLostHolder: number;
  connections: number;
}

/** The platform API stand-in: counts posted replies by thread. */
export async function startPlatform(): Promise<{ url: string; posts: Map<string, number>; close(): Promise<void> }> {
  const posts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { thread_ts?: string };
        if (req.url === '/chat.postMessage' && body.thread_ts) posts.set(body.thread_ts, (posts.get(body.thread_ts) ?? 0) + 1);
      } catch {
        /* not a post the drill makes */
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** A signed platform_a message webhook (a thread of its own, `ts`), as the platform sends it. */
export function signedWebhook(ts: string, text: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({
    type: 'event_callback',
    event_id: `Ev${randomUUID()}`,
    event: { type: 'message', channel: 'CDRILL', user: 'UDRILL', ts, text },
  });
  const now = Math.floor(Date.now() / 1000);
  const sig = 'v0=' + createHmac('sha256', SIGNING_SECRET).update(`v0:${now}:${body}`).digest('hex');
  return { body, headers: { 'X-PlatformA-Request-Timestamp': String(now), 'X-PlatformA-Signature': sig } };
}

/** The environment every gateway needs for the drill's channel (merged into the cluster's env). */
export const daemonEnv = (platformUrl: string): Record<string, string> => ({
  PLATFORM_A_API_URL: platformUrl,
  // Short, so that a claim lost with a killed gateway is offered again within the drill.
  DAEMON_CLAIM_TTL_SECONDS: '10',
  // Long: messages wait for the daemons, never for the agent route.
  DAEMON_PENDING_TTL_SECONDS: '900',
});

export class Daemons {
  private readonly ledger = new ClaimLedger(LOST_HOLDER_MS);
  /** Thread ts of every dispatched message. */
  private readonly threads: string[] = [];
  private readonly sockets = new Set<WebSocket>();
  private running = false;
  private connections = 0;
  private channelId = '';
  private n = 0;
  private pumps: Promise<void>[] = [];

  constructor(
    private readonly gw: Gateways,
    private readonly headers: Record<string, string>,
    private readonly posts: Map<string, number>,
    private readonly perSecond: number,
    private readonly daemonsPerGateway: number,
  ) {}

  async start(): Promise<void> {
    const a = await this.gw.request('/api/v1/channels', {
      method: 'POST',
      headers: this.headers,
      body: { type: 'platform_a', name: `drill-${randomUUID()}`, credentials: CREDS },
      what: 'channel',
    });
    if (a?.status !== 200) throw new Error(`creating the drill's channel: ${a?.status} ${JSON.stringify(a?.body)}`);
    this.channelId = a.body.id;
    this.running = true;
    for (let i = 0; i < this.daemonsPerGateway * this.gw.bases.length; i++) this.pumps.push(this.daemon(this.gw.bases[i % this.gw.bases.length]!));
    this.pumps.push(this.webhooks());
  }

  /** One daemon: connects, claims what it is offered, replies when granted; reconnects (next gateway) when cut. */
  private async daemon(first: string): Promise<void> {
    let base = first;
    while (this.running) {
      await this.connectOnce(base);
      if (this.running) await sleep(500);
      base = this.gw.pick();
    }
  }

  private connectOnce(base: string): Promise<void> {
    return new Promise((resolve) => {
      const conn = `c${++this.connections}`;
      const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/ws/messages`, { headers: this.headers, handshakeTimeout: this.gw.hangMs });
      this.sockets.add(ws);
      const offered = new Map<string, { thread_id: string; text: string }>();
      const send = (f: unknown) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(f));
      ws.on('message', (d) => {
        const f = JSON.parse(String(d)) as { type: string; message_id?: string; payload?: any };
        if (f.type === 'message' && f.message_id) {
          offered.set(f.message_id, { thread_id: f.payload.thread_id, text: f.payload.text });
          send({ type: 'claim', message_id: f.message_id });
        } else if (f.type === 'claim_ack' && f.message_id && f.payload?.granted === true) {
          this.ledger.grant(f.message_id, conn, Date.now());
          const m = offered.get(f.message_id);
          if (m) send({ type: 'reply', message_id: f.message_id, payload: { thread_id: m.thread_id, text: `re: ${m.text}`, format: 'text' } });
        }
      });
      ws.on('unexpected-response', (_req, res) => {
        this.gw.errors.add(res.statusCode === 503 && res.headers['retry-after'] ? '503 with Retry-After' : `HTTP ${res.statusCode}`, `daemon ${base}`);
        res.resume();
        ws.terminate();
      });
      ws.on('error', (err) => {
        if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') this.gw.errors.add('refused', `daemon ${base}`);
      });
      ws.on('close', () => {
        this.ledger.connClosed(conn, Date.now());
        this.sockets.delete(ws);
        resolve();
      });
    });
  }

  /** Signed platform_a webhooks at the set rate, each with its own thread. */
  private async webhooks(): Promise<void> {
    const period = 1000 / this.perSecond;
    let due = Date.now();
    const inflight = new Set<Promise<void>>();
    while (this.running) {
      const p = this.webhook(this.n++).finally(() => inflight.delete(p));
      inflight.add(p);
      due += period;
      await sleep(Math.max(0, due - Date.now()));
    }
    await Promise.all(inflight);
  }

  private async webhook(i: number): Promise<void> {
    const ts = `${Math.floor(Date.now() / 1000)}.${String(i).padStart(6, '0')}`;
    const { body, headers } = signedWebhook(ts, `drill message ${i}`);
    const a = await this.gw.request(`/api/v1/channels/${this.channelId}/webhook`, {
      method: 'POST',
      headers,
      body,
      deadlineMs: 60_000,
      what: 'webhook',
    });
    if (a?.status === 200 && a.body?.status === 'dispatched') this.threads.push(ts);
    else if (a) this.gw.errors.add(`HTTP ${a.status}`, `webhook: ${JSON.stringify(a.body).slice(0, 160)}`);
  }

  /** Stops the webhooks; the daemons keep answering until every dispatched message is answered or `deadlineMs` passes. */
  async finish(deadlineMs: number): Promise<void> {
    this.running = false;
    const end = Date.now() + deadlineMs;
    await this.pumps.at(-1);
    while (Date.now() < end && this.threads.some((t) => !this.posts.get(t))) {
      // The daemons' loops ended with `running`: keep one connection per gateway answering.
      if (this.sockets.size === 0) for (const b of this.gw.bases) void this.connectOnce(b);
      await sleep(500);
    }
    this.abort();
  }

  abort(): void {
    this.running = false;
    for (const ws of this.sockets) ws.terminate();
  }

  tally(): DaemonTally {
    const t = this.ledger.tally();
    const answered = this.threads.filter((x) => this.posts.get(x)).length;
    return {
      dispatched: this.threads.length,
      answered,
      unanswered: this.threads.length - answered,
      answeredTwice: this.threads.filter((x) => (this.posts.get(x) ?? 0) > 1).length,
      granted: t.messages,
      doubleGrants: t.doubles,
      doubleGrantExamples: t.doubleExamples,
      regrantsAfterLostHolder: t.regrantsAfterLostHolder,
      connections: this.connections,
    };
  }
}
