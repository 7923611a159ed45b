/**
 * SessionService over Connect/gRPC: the same owner-scoped operations as /api/v1/sessions
 * (src/sessions). The owner is the caller authenticated by the internal RPC interceptor
 * (./auth.ts); a request's `caller` field is honoured only from a system caller, which acts
 * for the user it names.
 */
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { SessionSchema, SessionService, type Caller } from '../gen/svc/v1/session_pb.js';
import { actingPrincipal, callerOf } from './auth.js';
import { eventToUpdate } from './orchestrator.js';
import { AppError, toConnectError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { Sessions, sessionJson } from '../sessions/index.js';
import type { Sql } from '../store/index.js';

const principal = (named: Caller | undefined, ctx: HandlerContext) => actingPrincipal(callerOf(ctx), named);

const ts = (iso: string | null | undefined) => (iso ? timestampFromDate(new Date(iso)) : undefined);

function toSession(j: ReturnType<typeof sessionJson> & { context?: Record<string, unknown>; task_count?: number; total_tokens?: number; total_cost_usd?: number }) {
  return create(SessionSchema, {
    id: j.session_id,
    externalId: j.external_id ?? '',
    title: j.title,
    createdAt: ts(j.created_at),
    updatedAt: ts(j.updated_at),
    lastActivityAt: ts(j.last_activity_at),
    taskCount: j.task_count ?? 0,
    totalTokens: BigInt(j.total_tokens ?? 0),
    totalCostUsd: j.total_cost_usd ?? 0,
    context: (j.context ?? {}) as JsonObject,
  });
}

export function createSessionService(d: { sql: Sql; log: Logger }): ServiceImpl<typeof SessionService> {
  const sessions = new Sessions(d.sql);
  const wrap = <A extends unknown[], R>(fn: (...a: A) => Promise<R>) => async (...a: A): Promise<R> => {
    try {
      return await fn(...a);
    } catch (err) {
      if (!(err instanceof AppError) || !err.isPublic) d.log.error({ err }, 'session rpc failed');
      throw toConnectError(err);
    }
  };
  const page = (limit: number, def: number, max: number) => Math.min(Math.max(limit || def, 1), max);
  return {
    createSession: wrap(async (req, ctx) => ({ session: toSession(await sessions.create(principal(req.caller, ctx), { external_id: req.externalId, title: req.title })) })),
    getSession: wrap(async (req, ctx) => ({ session: toSession(await sessions.get(principal(req.caller, ctx), req.sessionId)) })),
    listSessions: wrap(async (req, ctx) => {
      const r = await sessions.list(principal(req.caller, ctx), page(req.limit, 20, 100), Math.max(0, req.offset));
      return { sessions: r.sessions.map(toSession), totalCount: r.total_count };
    }),
    updateSession: wrap(async (req, ctx) => ({ session: toSession(await sessions.updateTitle(principal(req.caller, ctx), req.sessionId, { title: req.title })) })),
    deleteSession: wrap(async (req, ctx) => {
      await sessions.softDelete(principal(req.caller, ctx), req.sessionId);
      return { success: true };
    }),
    getSessionHistory: wrap(async (req, ctx) => {
      const h = await sessions.history(principal(req.caller, ctx), req.sessionId, page(req.limit, 100, 1000));
      return { sessionId: h.session_id, messages: h.messages.map((m) => ({ role: m.role, content: m.content, taskId: m.task_id, timestamp: ts(m.timestamp) })) };
    }),
    getSessionEvents: wrap(async (req, ctx) => {
      const e = await sessions.events(principal(req.caller, ctx), req.sessionId, page(req.limit, 50, 500));
      return {
        sessionId: e.session_id,
        turns: e.turns.map((t) => ({
          turn: t.turn,
          taskId: t.task_id,
          query: t.query,
          status: t.status,
          timestamp: ts(t.timestamp),
          events: (t.events as { workflow_id: string; seq: number; stream_id: string; type: string; agent_id: string; message: string; timestamp: string; payload?: JsonObject }[]).map((ev) =>
            eventToUpdate(ev, new Date(ev.timestamp)),
          ),
        })),
      };
    }),
  };
}
