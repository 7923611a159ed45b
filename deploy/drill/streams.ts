/**
 * Clients that follow tasks' event streams, over SSE and over the WebSocket stream
 * (`/api/v1/stream/ws`), and drop their connection at random points to resume with
 * Last-Event-ID (SSE) or `last_event_id` (WebSocket) through whichever gateway comes next, as
 * they must when a gateway is killed under them. Every seq must arrive exactly once and in
 * order per follow, across all its resumes, up to STREAM_END (SeqCheck).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser } from 'eventsource-parser';
import WebSocket from 'ws';
import { errorKind, failureOutcome, SeqCheck, type Outcome } from './checks.js';
import type { Gateways } from './http.js';

/** A voluntary drop after any event with this probability (a 40-event stream resumes about 4 times). */
const DROP_P = 0.1;
/** An SSE stream silent this long (no event, no heartbeat) is a hang; the WebSocket gets pings only every minute. */
const SSE_IDLE_MS = 45_000;
const WS_IDLE_MS = 150_000;

export interface StreamTally {
  follows: number;
  ended: number;
  resumes: number;
  /** Follows with at least one gap / duplicate, and the events concerned. */
  followsWithGap: number;
  followsWithDuplicate: number;
  gaps: number;
  duplicates: number;
  /** Follows that never reached STREAM_END by the end of the drill. */
  unended: string[];
}

type Transport = 'sse' | 'ws';

export class Followers {
  /** Every follow, with where it is now (for the report of one that never ended). */
  private readonly follows: { id: string; t: Transport; chk: SeqCheck; phase: string }[] = [];
  private readonly running = new Set<Promise<void>>();
  private stopAt = Infinity;
  private readonly aborts = new Set<() => void>();

  constructor(
    private readonly gw: Gateways,
    private readonly headers: Record<string, string>,
  ) {}

  follow(id: string, t: Transport): void {
    const f = { id, t, chk: new SeqCheck(), phase: 'new' };
    this.follows.push(f);
    const p = this.run(f).finally(() => this.running.delete(p));
    this.running.add(p);
  }

  private async run(f: { id: string; t: Transport; chk: SeqCheck; phase: string }): Promise<void> {
    const { id, t, chk } = f;
    const phase = (p: string) => (f.phase = p);
    while (!chk.ended && Date.now() < this.stopAt) {
      const base = this.gw.pick();
      const o = t === 'sse' ? await this.sse(base, id, chk, phase) : await this.ws(base, id, chk, phase);
      phase(`between connections (last ${o?.kind ?? 'dropped'})`);
      if (chk.ended) break;
      chk.resumes++;
      if (o && o.kind !== 'ok') this.gw.errors.add(errorKind(o), `${t} ${base} ${id}`);
      // A voluntary drop resumes at once; after an error, a short pause (the next gateway is tried).
      if (o && o.kind !== 'ok') await sleep(o.kind === 'refused' ? 50 : 300);
    }
  }

  /** One SSE connection: undefined for a voluntary drop or a clean end, else how it failed. */
  private async sse(base: string, id: string, chk: SeqCheck, phase: (p: string) => void): Promise<Outcome | undefined> {
    const ac = new AbortController();
    const abort = () => ac.abort();
    this.aborts.add(abort);
    let idle: NodeJS.Timeout | undefined;
    let hung = false;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => ((hung = true), ac.abort()), SSE_IDLE_MS);
    };
    try {
      touch();
      const path = Math.random() < 0.5 ? `/api/v1/stream/sse?workflow_id=${id}` : `/api/v1/tasks/${id}/stream`;
      phase(`sse ${base} connecting`);
      const res = await fetch(`${base}${path}`, {
        headers: { ...this.headers, ...(chk.last ? { 'Last-Event-ID': String(chk.last) } : {}) },
        signal: ac.signal,
      });
      if (res.status !== 200 || !res.body) {
        await res.text().catch(() => '');
        return { kind: 'status', status: res.status, retryAfter: res.headers.has('retry-after') };
      }
      let dropped = false;
      const parser = createParser({
        onEvent: (e) => {
          if (dropped) return;
          touch();
          if (e.event === 'done') return;
          if (e.event === 'REPLAY_GAP') return chk.replayGap();
          // The gateway dropped the stream (e.g. its feed failed): counted, then resumed like any drop.
          if (e.event === 'error') return this.gw.errors.add('SSE error frame', `${base} ${id}: ${e.data}`);
          const ev = JSON.parse(e.data) as { seq: number; type: string };
          chk.see(ev.seq, ev.type);
          if (!chk.ended && Math.random() < DROP_P) {
            dropped = true;
            ac.abort();
          }
        },
        onComment: touch,
      });
      phase(`sse ${base} reading`);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      // Aborting the fetch does not always settle a read of the piped body (an abort that comes
      // after the response's last byte arrived left the read pending for good, the follow stuck
      // in 'reading' with no hang counted): the reader is cancelled with it.
      const cancel = () => void reader.cancel().catch(() => {});
      ac.signal.addEventListener('abort', cancel, { once: true });
      for (;;) {
        const { value, done } = await reader.read();
        if (done || ac.signal.aborted) break;
        parser.feed(value);
      }
      if (hung) return { kind: 'hang' };
      // The server ended the stream (after STREAM_END, or a shutting-down gateway asking for a
      // resume), or this client dropped it.
      return undefined;
    } catch (err) {
      if (hung) return { kind: 'hang' };
      if (ac.signal.aborted) return undefined;
      return failureOutcome(err);
    } finally {
      clearTimeout(idle);
      this.aborts.delete(abort);
    }
  }

  /** One WebSocket stream connection, as sse(). */
  private ws(base: string, id: string, chk: SeqCheck, phase: (p: string) => void): Promise<Outcome | undefined> {
    return new Promise((resolve) => {
      phase(`ws ${base} connecting`);
      const q = chk.last ? `&last_event_id=${chk.last}` : '';
      const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/api/v1/stream/ws?workflow_id=${id}${q}`, {
        headers: this.headers,
        handshakeTimeout: this.gw.hangMs,
      });
      let outcome: Outcome | undefined;
      let idle: NodeJS.Timeout | undefined;
      const touch = () => {
        clearTimeout(idle);
        idle = setTimeout(() => {
          outcome = { kind: 'hang' };
          ws.terminate();
        }, WS_IDLE_MS);
      };
      const abort = () => ws.terminate();
      this.aborts.add(abort);
      touch();
      ws.on('ping', touch);
      ws.on('open', () => phase(`ws ${base} open`));
      ws.on('message', (d) => {
        touch();
        const ev = JSON.parse(String(d)) as { seq: number; type: string };
        if (ev.type === 'REPLAY_GAP') return chk.replayGap();
        chk.see(ev.seq, ev.type);
        if (!chk.ended && Math.random() < DROP_P) ws.terminate();
      });
      ws.on('unexpected-response', (_req, res) => {
        outcome = { kind: 'status', status: res.statusCode ?? 0, retryAfter: 'retry-after' in res.headers };
        res.resume();
        ws.terminate();
      });
      ws.on('error', (err) => {
        outcome ??= (err as NodeJS.ErrnoException).code === 'ECONNREFUSED' ? { kind: 'refused' } : { kind: 'cut' };
      });
      ws.on('close', (code, reason) => {
        clearTimeout(idle);
        this.aborts.delete(abort);
        // 1000 after STREAM_END; 1001 from a gateway going away; 1006 a cut (or our own drop).
        if (!outcome && code !== 1000 && code !== 1001 && code !== 1006) {
          this.gw.errors.add(`WebSocket close ${code}`, `${base} ${id}: ${String(reason)}`);
        }
        resolve(outcome);
      });
    });
  }

  /**
   * Lets the follows run until `deadlineMs` from now for their STREAM_END, then closes them;
   * one that does not end even then is left (and reported with where it was stuck).
   */
  async finish(deadlineMs: number): Promise<void> {
    this.stopAt = Date.now() + deadlineMs;
    const timer = setTimeout(() => this.aborts.forEach((a) => a()), deadlineMs);
    await Promise.race([Promise.all(this.running), sleep(deadlineMs + 5000)]);
    clearTimeout(timer);
  }

  /** Ends every follow now (Ctrl-C, watchdog). */
  abort(): void {
    this.stopAt = 0;
    this.aborts.forEach((a) => a());
  }

  tally(t: Transport): StreamTally {
    const fs = this.follows.filter((f) => f.t === t);
    return {
      follows: fs.length,
      ended: fs.filter((f) => f.chk.ended).length,
      resumes: fs.reduce((s, f) => s + f.chk.resumes, 0),
      followsWithGap: fs.filter((f) => f.chk.gaps > 0).length,
      followsWithDuplicate: fs.filter((f) => f.chk.duplicates > 0).length,
      gaps: fs.reduce((s, f) => s + f.chk.gaps, 0),
      duplicates: fs.reduce((s, f) => s + f.chk.duplicates, 0),
      unended: fs.filter((f) => !f.chk.ended).map((f) => `${f.id} (last seq ${f.chk.last}, ${f.chk.resumes} resumes; ${f.phase})`),
    };
  }
}
