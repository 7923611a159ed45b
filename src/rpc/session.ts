/**
 * SessionService over Connect/gRPC: the same owner-scoped operations as /api/v1/sessions
 * (src/sessions). The owner is the caller authenticated by the internal RPC interceptor
 * (./auth.ts); a request's `caller` field is honoured only from a system caller, which acts
 * for the user it names.
 */
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { SessionSchema, type SessionService, type Caller } from '../gen/svc/v1/session_pb.js';
import { actingPrincipal, callerOf } from './auth.js';
import { rpcHandlers } from './errors.js';
import { eventToUpdate } from './orchestrator.js';
import type { Logger } from '../kernel/index.js';
import { conversation, Sessions, type Session } from '../sessions/index.js';
import type { Sql } from '../store/index.js';
import type { TaskStore } from '../tasks/index.js';

const principal = (named: Caller | undefined, ctx: HandlerContext) => actingPrincipal(callerOf(ctx), named);

const ts = (d: Date | null | undefined) => (d ? timestampFromDate(d) : undefined);

function toSession(s: Session) {
  return create(SessionSchema, {
    id: s.id,
    externalId: s.externalId ?? '',
    userId: s.userId ?? '',
    title: s.title,
    createdAt: ts(s.createdAt),
    updatedAt: ts(s.updatedAt),
    lastActivityAt: ts(s.lastActivityAt),
    taskCount: s.taskCount,
    totalTokens: BigInt(s.tokensUsed),
    totalCostUsd: s.costUsd,
    context: s.context as JsonObject,
  });
}

export function createSessionService(d: { sql: Sql; tasks: TaskStore; log: Logger }): ServiceImpl<typeof SessionService> {
  const sessions = new Sessions(d.sql, d.tasks);
  const wrap = rpcHandlers(d.log, 'session rpc');
  const page = (limit: number, def: number, max: number) => Math.min(Math.max(limit || def, 1), max);
  return {
    createSession: wrap(async (req, ctx) => ({
      session: toSession(await sessions.create(principal(req.caller, ctx), { external_id: req.externalId, title: req.title })),
    })),
    getSession: wrap(async (req, ctx) => ({ session: toSession(await sessions.get(principal(req.caller, ctx), req.sessionId)) })),
    listSessions: wrap(async (req, ctx) => {
      const r = await sessions.list(principal(req.caller, ctx), page(req.limit, 20, 100), Math.max(0, req.offset));
      return { sessions: r.sessions.map(toSession), totalCount: r.total };
    }),
    updateSession: wrap(async (req, ctx) => ({
      session: toSession(await sessions.updateTitle(principal(req.caller, ctx), req.sessionId, { title: req.title })),
    })),
    deleteSession: wrap(async (req, ctx) => {
      await sessions.softDelete(principal(req.caller, ctx), req.sessionId);
      return { success: true };
    }),
    getSessionHistory: wrap(async (req, ctx) => {
      const h = await sessions.history(principal(req.caller, ctx), req.sessionId, page(req.limit, 100, 1000));
      return {
        sessionId: h.sessionId,
        messages: conversation(h.tasks).map((m) => ({ role: m.role, content: m.content, taskId: m.taskId, timestamp: ts(m.at) })),
      };
    }),
    getSessionEvents: wrap(async (req, ctx) => {
      const e = await sessions.events(principal(req.caller, ctx), req.sessionId, page(req.limit, 50, 500));
      return {
        sessionId: e.sessionId,
        turns: e.turns.map((t) => ({
          turn: t.turn,
          taskId: t.task.id,
          query: t.task.query,
          status: t.task.status,
          timestamp: ts(t.task.createdAt),
          events: t.events.map((ev) => eventToUpdate(ev, ev.ts)),
        })),
      };
    }),
  };
}
