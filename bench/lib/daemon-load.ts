/**
 * Closed-loop daemon claim load for the scaling benchmark, through the service's own public
 * paths: signed platform_a webhooks (`POST /api/v1/channels/{id}/webhook`) bring messages in,
 * daemon clients on `/v1/ws/messages` (spread over the gateways given) are offered each one,
 * every daemon claims every message it is offered, and the one granted replies at once (the
 * service posts the reply to a local stand-in of the platform's API, so the message leaves the
 * pending set as in production). `inflight` messages are kept between their webhook and their
 * grant. Counted: messages granted per second, claim answers (granted or refused) per second,
 * webhook-to-grant latency, and whether every message was granted exactly once.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { CREDS, signedWebhook } from '../../deploy/drill/daemons.js';
import { percentilesOf, type Percentiles } from './hist.js';
import { sleep } from './proc.js';

export interface ClaimsWindow {
  messagesPerSec: number;
  claimAnswersPerSec: number;
  latencyUs: Percentiles;
  messages: number;
  /** Messages granted more than once, over the whole run (must be 0). */
  grantedTwice: number;
  /** Webhooks not answered `dispatched`, by status. */
  errors: Record<string, number>;
}

export class DaemonLoad {
  private readonly sockets: WebSocket[] = [];
  /** Webhook index -> time it was sent (µs, performance clock), until its grant. */
  private readonly sent = new Map<number, number>();
  private readonly grants = new Map<string, number>();
  private readonly latUs: number[] = [];
  private readonly errors: Record<string, number> = {};
  private granted = 0;
  private answers = 0;
  private channelId = '';
  private running = false;
  private next = 0;
  /** Messages that may be started now (between webhook and grant there are `inflight` at most). */
  private free = 0;
  private wake?: () => void;
  private loop?: Promise<void>;

  constructor(
    private readonly gateways: readonly string[],
    private readonly daemons: number,
  ) {}

  /** Creates the channel and connects the daemons, `daemons` split evenly over the gateways. */
  async open(): Promise<void> {
    const r = await fetch(`${this.gateways[0]}/api/v1/channels`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'platform_a', name: `bench-${randomUUID()}`, credentials: CREDS }),
    });
    const body = (await r.json()) as { id?: string };
    if (r.status !== 200 || !body.id) throw new Error(`creating the bench channel: ${r.status} ${JSON.stringify(body)}`);
    this.channelId = body.id;
    await Promise.all(Array.from({ length: this.daemons }, (_, i) => this.connect(this.gateways[i % this.gateways.length]!)));
  }

  private connect(base: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/ws/messages`);
      const offered = new Map<string, { thread_id: string; text: string }>();
      ws.on('open', () => {
        this.sockets.push(ws);
        resolve();
      });
      ws.on('error', reject);
      ws.on('message', (d) => {
        const f = JSON.parse(String(d)) as { type: string; message_id?: string; payload?: any };
        if (f.type === 'message' && f.message_id) {
          offered.set(f.message_id, { thread_id: f.payload.thread_id, text: f.payload.text });
          ws.send(JSON.stringify({ type: 'claim', message_id: f.message_id }));
        } else if (f.type === 'claim_ack' && f.message_id) {
          this.answers++;
          const m = offered.get(f.message_id);
          offered.delete(f.message_id);
          if (f.payload?.granted !== true || !m) return;
          const n = (this.grants.get(f.message_id) ?? 0) + 1;
          this.grants.set(f.message_id, n);
          if (n > 1) return;
          ws.send(JSON.stringify({ type: 'reply', message_id: f.message_id, payload: { thread_id: m.thread_id, text: `re: ${m.text}`, format: 'text' } }));
          const i = Number(/^bench (\d+)$/.exec(m.text)?.[1]);
          const t0 = this.sent.get(i);
          if (t0 === undefined) return;
          this.sent.delete(i);
          this.granted++;
          this.latUs.push(performance.now() * 1000 - t0);
          this.release();
        }
      });
    });
  }

  /** Keeps `inflight` messages between their webhook and their grant. */
  start(inflight: number): void {
    this.running = true;
    this.free = inflight;
    this.loop = (async () => {
      const pending = new Set<Promise<void>>();
      while (this.running) {
        if (this.free === 0) {
          await new Promise<void>((r) => (this.wake = r));
          continue;
        }
        this.free--;
        const p = this.webhook(this.next++).then((ok) => {
          if (!ok) this.release();
        });
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
      await Promise.all(pending);
    })();
  }

  private release(): void {
    this.free++;
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.release();
    await this.loop;
    for (const ws of this.sockets) ws.terminate();
  }

  /** Counts over `ms` after `warmMs`. */
  async window(warmMs: number, ms: number): Promise<ClaimsWindow> {
    await sleep(warmMs);
    const [g0, a0, l0] = [this.granted, this.answers, this.latUs.length];
    const t0 = performance.now();
    await sleep(ms);
    const s = (performance.now() - t0) / 1000;
    return {
      messagesPerSec: (this.granted - g0) / s,
      claimAnswersPerSec: (this.answers - a0) / s,
      latencyUs: percentilesOf(this.latUs.slice(l0)),
      messages: this.granted - g0,
      grantedTwice: [...this.grants.values()].filter((n) => n > 1).length,
      errors: { ...this.errors },
    };
  }

  private error(kind: string): void {
    this.errors[kind] = (this.errors[kind] ?? 0) + 1;
  }

  /** One signed webhook, its thread its own; true when the service dispatched it to the daemons. */
  private async webhook(i: number): Promise<boolean> {
    const ts = `${Math.floor(Date.now() / 1000)}.${String(i).padStart(7, '0')}`;
    const { body, headers } = signedWebhook(ts, `bench ${i}`);
    this.sent.set(i, performance.now() * 1000);
    try {
      const r = await fetch(`${this.gateways[i % this.gateways.length]}/api/v1/channels/${this.channelId}/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      const a = (await r.json()) as { status?: string };
      if (r.status === 200 && a.status === 'dispatched') return true;
      this.error(`HTTP ${r.status} ${a.status ?? ''}`.trim());
    } catch (err) {
      this.error((err as Error).message);
    }
    this.sent.delete(i);
    return false;
  }
}
