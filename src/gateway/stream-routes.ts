/**
 * The live event streams: SSE (/api/v1/stream/sse and /api/v1/tasks/:id/stream) and
 * WebSocket (/api/v1/stream/ws), one connection class each over the shared feeds of
 * streams.ts (StreamHub). A client resumes with Last-Event-ID (or `last_event_id`); a gap
 * the ring and the event store cannot fill is announced, not hidden. A user streams only
 * their own workflows, counted against the per-key rate limit. Writes stop at the first
 * sign of backpressure and resume on drain; SSE connections get heartbeats and are closed
 * after the inactivity timeout; on shutdown every SSE client is told to reconnect elsewhere.
 */
import type { Client } from '@connectrpc/connect';
import type { HttpResponse, TemplatedApp, WebSocket } from 'uWebSockets.js';
import { parseResumePoint } from '../bus/index.js';
import { badRequest, isUuid, type Logger, type Principal } from '../kernel/index.js';
import { countEventsDelivered, streamClosed, streamOpened } from '../metrics/index.js';
import type { OrchestratorService } from '../gen/svc/v1/orchestrator_pb.js';
import type { Admission } from './admission.js';
import { copyRequest, corsHeaders, errorReply, upgradeWhen, writeReply, type CorsPolicy, type Req } from './http.js';
import { gapFrame, writeStreaming, type Encoded, type Feed, type StreamHub, type Subscriber } from './streams.js';
import { ownedTask } from './task-routes.js';

export interface StreamRoutesConfig {
  maxBufferedBytes: number;
  heartbeatSeconds: number;
  inactivitySeconds: number;
}

export interface StreamRoutesDeps {
  hub: StreamHub;
  admission: Admission;
  orchestrator: Client<typeof OrchestratorService>;
  cors: CorsPolicy;
  log: Logger;
}

/** The stream endpoints, their open SSE connections and the heartbeat/inactivity timer. */
export class StreamRoutes {
  /** Open SSE connections (heartbeats, inactivity, shutdown). */
  readonly sse = new Set<SseConn>();
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly cfg: StreamRoutesConfig,
    private readonly deps: StreamRoutesDeps,
  ) {}

  register(app: TemplatedApp): void {
    app.get('/api/v1/stream/sse', (res, req) => this.openSse(res, copyRequest(req, 0)));
    app.get('/api/v1/tasks/:id/stream', (res, req) => {
      const r = copyRequest(req, 1);
      r.query.set('workflow_id', r.params[0]);
      this.openSse(res, r);
    });
    this.wsRoute(app);
  }

  private openSse(res: HttpResponse, req: Req): void {
    const cors = corsHeaders(this.deps.cors, req.headers.origin);
    const conn = new SseConn(res, this);
    res.onAborted(() => conn.onAborted());
    const fail = (err: unknown) => {
      if (!conn.closed) {
        conn.closed = true;
        writeReply(res, errorReply(err, this.deps.log), cors);
      }
    };
    try {
      const wf = req.query.get('workflow_id') ?? '';
      if (!wf) throw badRequest('workflow_id is required');
      if (!isUuid(wf)) throw badRequest('invalid workflow_id');
      const typesRaw = req.query.get('types');
      const filter = typesRaw
        ? new Set(
            typesRaw
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          )
        : undefined;
      const resumeRaw = req.query.get('last_event_id') ?? req.headers['last-event-id'];
      const after = parseResumePoint(resumeRaw);
      if (resumeRaw !== undefined && resumeRaw !== '' && after === undefined)
        throw badRequest('last_event_id must be a stream id (<ms>-<seq>) or a sequence number');
      const principal = this.deps.admission.auth.authenticate({ headers: req.headers, query: req.query, allowQueryKey: true });
      const start = () => {
        if (conn.closed) return;
        conn.filter = filter && filter.size ? filter : undefined;
        res.cork(() => {
          res.writeStatus('200 OK');
          for (const [k, v] of Object.entries({
            'Content-Type': 'text/event-stream',
            'Cache-Control': 'no-cache',
            Connection: 'keep-alive',
            'X-Accel-Buffering': 'no',
            'X-Workflow-ID': wf,
            ...cors,
          }))
            res.writeHeader(k, v);
          res.write(': stream open\n\n');
        });
        this.sse.add(conn);
        streamOpened('sse');
        void this.deps.hub
          .attach(wf, conn, after ?? 0, (a, first) => conn.writeRaw(gapFrame(a, first).frame))
          .catch((err) => {
            this.deps.log.warn({ err, workflow_id: wf }, 'stream attach failed');
            conn.drop('stream unavailable');
          });
      };
      if (principal instanceof Promise || !principal.anonymous) this.authorizeStream(principal, wf).then(start, fail);
      else start();
    } catch (err) {
      fail(err);
    }
  }

  /** A user may stream only their own workflows (the anonymous development principal: any). */
  private async authorizeStream(principal: Principal | Promise<Principal>, wf: string): Promise<void> {
    const p = await principal;
    if (p.anonymous) return;
    await this.deps.admission.limitStream(p);
    await ownedTask(this.deps.orchestrator, wf, p);
  }

  forgetSse(c: SseConn): void {
    if (this.sse.delete(c)) streamClosed('sse');
  }

  private wsRoute(app: TemplatedApp): void {
    interface WsData {
      wf: string;
      after: number;
      sub?: WsSub;
    }
    app.ws<WsData>('/api/v1/stream/ws', {
      maxPayloadLength: 64 * 1024,
      // The feed stops writing at the first sign of backpressure and drops a client more
      // than maxBufferedBytes behind, so uWS's own limit (which would drop messages
      // silently, then close) is only a last guard: one batch over the feed's bound.
      maxBackpressure: 4 * this.cfg.maxBufferedBytes,
      closeOnBackpressureLimit: 1 as unknown as number,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      upgrade: (res, rawReq, context) =>
        upgradeWhen<WsData>(res, rawReq, context, {
          log: this.deps.log,
          headers: (req) => corsHeaders(this.deps.cors, req.headers.origin),
          decide: (req) => {
            const wf = req.query.get('workflow_id') ?? '';
            if (!wf) throw badRequest('workflow_id is required');
            if (!isUuid(wf)) throw badRequest('invalid workflow_id');
            const resumeRaw = req.query.get('last_event_id') ?? req.headers['last-event-id'];
            const after = parseResumePoint(resumeRaw);
            if (resumeRaw !== undefined && resumeRaw !== '' && after === undefined)
              throw badRequest('last_event_id must be a stream id (<ms>-<seq>) or a sequence number');
            const data: WsData = { wf, after: after ?? 0 };
            const p = this.deps.admission.auth.authenticate({ headers: req.headers });
            return p instanceof Promise || !p.anonymous ? this.authorizeStream(p, wf).then(() => data) : data;
          },
        }),
      open: (ws) => {
        const data = ws.getUserData();
        const sub = new WsSub(ws);
        data.sub = sub;
        streamOpened('ws');
        void this.deps.hub.attach(data.wf, sub, data.after, (a, first) => sub.sendJson(gapFrame(a, first).json)).catch(() => sub.drop('stream unavailable'));
      },
      message: () => {
        /* clients only listen on this socket */
      },
      drain: (ws) => ws.getUserData().sub?.onDrain(),
      close: (ws) => {
        const sub = ws.getUserData().sub;
        if (sub) {
          streamClosed('ws');
          sub.closed = true;
          sub.feed?.remove(sub);
        }
      },
    });
  }

  /**
   * Heartbeats and the inactivity timeout for SSE connections. A heartbeat goes only to a
   * connection nothing was written to for about the heartbeat interval (checked every
   * `period`, a quarter of the interval up to 1 s, so none is silent longer than the interval
   * and an idle one gets one per interval): streams receiving events are not all written to in
   * one timer turn (1,000 writes in one turn held every event behind them).
   */
  startTimers(): void {
    const intervalMs = Math.min(this.cfg.heartbeatSeconds, this.cfg.inactivitySeconds) * 1000;
    const period = Math.min(1000, intervalMs / 4);
    const hb = setInterval(() => {
      const now = Date.now();
      const idleMs = this.cfg.inactivitySeconds * 1000;
      for (const c of this.sse) {
        if (now - c.lastEventAt > idleMs) c.timeout(this.cfg.inactivitySeconds);
        else if (now - c.lastWriteAt >= intervalMs - period) c.heartbeat();
      }
    }, period);
    hb.unref();
    this.timers.push(hb);
  }

  stopTimers(): void {
    this.timers.forEach(clearInterval);
  }

  /** Ends every open SSE stream, telling the client to reconnect with Last-Event-ID. */
  closeAll(): void {
    for (const c of [...this.sse]) c.close();
  }
}

/** One SSE client. */
export class SseConn implements Subscriber {
  cursor = 0;
  filter?: Set<string>;
  backpressured = false;
  closed = false;
  feed?: Feed;
  lastEventAt = Date.now();
  /** Any write, heartbeats included. */
  lastWriteAt = Date.now();

  constructor(
    private readonly res: HttpResponse,
    private readonly owner: { forgetSse(c: SseConn): void },
  ) {}

  onAborted(): void {
    this.closed = true;
    this.feed?.remove(this);
    this.owner.forgetSse(this);
  }

  write(events: Encoded[], shared?: Buffer): boolean {
    if (this.closed) return false;
    const buf = shared ?? (events.length === 1 ? events[0].frame : Buffer.concat(events.map((e) => e.frame)));
    this.lastEventAt = Date.now();
    countEventsDelivered('sse', events.length);
    return this.writeRaw(buf);
  }

  writeRaw(buf: Buffer | string): boolean {
    this.lastWriteAt = Date.now();
    return writeStreaming(this.res, this, buf, () => this.closed);
  }

  heartbeat(): void {
    if (!this.closed && !this.backpressured) this.writeRaw(': heartbeat\n\n');
  }

  private finish(tail: string): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.owner.forgetSse(this);
    this.res.cork(() => this.res.end(tail));
  }

  end(): void {
    this.finish('event: done\ndata: [DONE]\n\n');
  }

  timeout(seconds: number): void {
    this.finish(`: closing after ${seconds} seconds without events; reconnect with Last-Event-ID to resume\n\n`);
  }

  drop(reason: string): void {
    this.finish(`event: error\ndata: ${JSON.stringify({ error: reason })}\n\n`);
  }

  close(): void {
    this.finish(': server shutting down; reconnect with Last-Event-ID to resume\n\n');
  }
}

/** One WebSocket stream client: a JSON event per message, STREAM_END last. */
class WsSub implements Subscriber {
  cursor = 0;
  filter = undefined;
  backpressured = false;
  closed = false;
  feed?: Feed;

  constructor(private readonly ws: WebSocket<unknown>) {}

  sendJson(json: string): void {
    if (!this.closed) this.ws.send(json, false);
  }

  /** Like SSE: stops at the first write the socket cannot take; `drain` resumes it. */
  write(events: Encoded[]): boolean {
    if (this.closed) return false;
    this.ws.cork(() => {
      for (const e of events) this.ws.send(e.json, false);
    });
    countEventsDelivered('ws', events.length);
    if (this.ws.getBufferedAmount() > 0) {
      this.backpressured = true;
      return false;
    }
    return true;
  }

  onDrain(): void {
    if (this.closed || this.ws.getBufferedAmount() > 0) return;
    this.backpressured = false;
    this.feed?.flushOne(this);
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.ws.end(1000, 'stream end');
  }

  drop(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.ws.end(1008, reason.slice(0, 120));
  }
}
