/**
 * Internal RPC authentication. The Connect/gRPC port serves callers inside the deployment
 * (the gateway, the scheduler, operators' tools), never end users, so two things travel with
 * every call, both in request headers:
 *
 *   authorization: Bearer <INTERNAL_RPC_TOKEN>   proves the caller is an internal service;
 *   x-caller-kind: user | anonymous | system     says on whose behalf it calls, with
 *   x-caller-user-id, x-caller-tenant-id         for `user` (UUIDs).
 *
 * The server interceptor checks the token in constant time and only then reads the identity
 * headers into the CALLER context value; handlers take the identity from there, never from
 * the request body. A token holder is trusted to name any caller (it authenticated the user
 * itself), which is why the token is the boundary and the port binds 127.0.0.1 by default.
 *
 * Callers: `user` sees and acts on its own tasks and sessions only; `anonymous` is the
 * gateway's development principal (GATEWAY_SKIP_AUTH=1) and sees every task, as the HTTP
 * API does in development; `system` (the scheduler, readiness probes) sees every task and
 * acts for the user a request names (a schedule's run is submitted as the schedule's owner).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Code, ConnectError, createContextValues, type ContextValues, type HandlerContext, type Interceptor, type Transport } from '@connectrpc/connect';
import { ANONYMOUS_CALLER, CALLER, SYSTEM_CALLER, UUID_RE, forbidden, notFound, type Principal, type RpcCaller } from '../kernel/index.js';

export const CALLER_HEADERS = { kind: 'x-caller-kind', userId: 'x-caller-user-id', tenantId: 'x-caller-tenant-id' } as const;

const unauthenticated = (msg: string) => new ConnectError(msg, Code.Unauthenticated);
const digest = (s: string) => createHash('sha256').update(s).digest();

/** The caller's identity from its headers; undefined when absent or malformed. */
function callerFromHeaders(h: Headers): RpcCaller | undefined {
  switch (h.get(CALLER_HEADERS.kind)) {
    case 'system':
      return SYSTEM_CALLER;
    case 'anonymous':
      return ANONYMOUS_CALLER;
    case 'user': {
      const userId = h.get(CALLER_HEADERS.userId) ?? '';
      const tenantId = h.get(CALLER_HEADERS.tenantId) ?? '';
      if (!UUID_RE.test(userId) || (tenantId && !UUID_RE.test(tenantId))) return undefined;
      return { kind: 'user', userId, tenantId: tenantId || undefined };
    }
    default:
      return undefined;
  }
}

/**
 * Server interceptor: refuses (Unauthenticated) a call without the right token or without a
 * caller identity, and puts the identity into CALLER. Installed on the HTTP/2 server and on
 * the in-memory transport alike, so both paths authenticate the same way.
 */
export function serverAuthInterceptor(token: string): Interceptor {
  const want = digest(token);
  return (next) => async (req) => {
    const auth = req.header.get('authorization') ?? '';
    const m = /^bearer\s+(.+)$/i.exec(auth.trim());
    // Equal-length digests: timingSafeEqual neither throws nor leaks the token's length.
    if (!m || !timingSafeEqual(digest(m[1]), want)) throw unauthenticated('internal RPC token missing or invalid');
    const caller = callerFromHeaders(req.header);
    if (!caller) throw unauthenticated(`caller identity missing or invalid (${CALLER_HEADERS.kind}: user with ${CALLER_HEADERS.userId}, anonymous or system)`);
    req.contextValues.set(CALLER, caller);
    return next(req);
  };
}

/** Client interceptor: the token on every call, and the caller of the call's CALLER value. */
export function clientAuthInterceptor(token: string): Interceptor {
  return (next) => async (req) => {
    req.header.set('authorization', `Bearer ${token}`);
    const c = req.contextValues.get(CALLER);
    if (c) {
      req.header.set(CALLER_HEADERS.kind, c.kind);
      if (c.kind === 'user') {
        req.header.set(CALLER_HEADERS.userId, c.userId);
        if (c.tenantId) req.header.set(CALLER_HEADERS.tenantId, c.tenantId);
      }
    }
    return next(req);
  };
}

/** A transport whose calls are made as `c` unless a call names its own caller (the scheduler: system). */
export function transportAs(t: Transport, c: RpcCaller): Transport {
  const values = (v: ContextValues | undefined) => {
    const out = v ?? createContextValues();
    return out.get(CALLER) ? out : out.set(CALLER, c);
  };
  return {
    unary: (method, signal, timeoutMs, header, input, contextValues) => t.unary(method, signal, timeoutMs, header, input, values(contextValues)),
    stream: (method, signal, timeoutMs, header, input, contextValues) => t.stream(method, signal, timeoutMs, header, input, values(contextValues)),
  };
}

/** Handler side: the caller the interceptor authenticated (none means the interceptor is missing: refuse). */
export function callerOf(ctx: HandlerContext): RpcCaller {
  const c = ctx.values.get(CALLER);
  if (!c) throw unauthenticated('no authenticated caller');
  return c;
}

/**
 * The ownership rule of the HTTP API, applied to every task RPC: a user may act on their own
 * tasks; another tenant's task is NotFound (its existence is not revealed), another user's
 * task in the same tenant PermissionDenied. Anonymous and system callers see every task.
 */
export function assertTaskOwner(c: RpcCaller, task: { user_id: string | null; tenant_id: string | null }): void {
  if (c.kind !== 'user') return;
  if ((task.tenant_id ?? '') !== (c.tenantId ?? '')) throw notFound('Task not found');
  if ((task.user_id ?? '') !== c.userId) throw forbidden('Forbidden: not the task owner');
}

/**
 * Whom an RPC acts for: a user caller is itself (whatever the body says); the anonymous
 * development principal is anonymous; a system caller acts for the user the body names.
 */
export function actingPrincipal(c: RpcCaller, named: { userId?: string; tenantId?: string } | undefined): Principal {
  if (c.kind === 'user') return { userId: c.userId, tenantId: c.tenantId, key: `user:${c.userId}`, anonymous: false };
  if (c.kind === 'system') {
    const userId = named?.userId && UUID_RE.test(named.userId) ? named.userId : undefined;
    const tenantId = named?.tenantId && UUID_RE.test(named.tenantId) ? named.tenantId : undefined;
    if (userId) return { userId, tenantId, key: `user:${userId}`, anonymous: false };
  }
  return { key: 'anonymous', anonymous: true };
}
