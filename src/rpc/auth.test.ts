// Internal RPC authentication (./auth.ts) through an in-memory Connect router: the server
// interceptor refuses a call without the token or without a valid caller, puts the caller it
// read into the handler's context, and the client side (clientAuthInterceptor, transportAs)
// sends what the server expects. No sockets.
import { randomUUID } from 'node:crypto';
import { Code, createClient, createRouterTransport, type Interceptor } from '@connectrpc/connect';
import { describe, expect, it } from 'vitest';
import { OrchestratorService } from '../gen/svc/v1/orchestrator_pb.js';
import { CALLER, SYSTEM_CALLER, callAs, type RpcCaller } from '../kernel/index.js';
import { callerOf, clientAuthInterceptor, serverAuthInterceptor, transportAs } from './auth.js';
import { rpcFailure } from '../../test/helpers/connect.js';

const TOKEN = 'unit-test-internal-token-0123456789abcdef';

/**
 * An in-memory server whose GetTaskStatus answers with the caller its handler sees (as JSON
 * in `result`), behind the server interceptor unless told otherwise; `client` interceptors
 * run on the calling side.
 */
function router(opts: { serverInterceptor?: boolean; client?: Interceptor[] } = {}) {
  return createRouterTransport(
    (r) =>
      r.service(OrchestratorService, {
        getTaskStatus: (_req, ctx) => ({ result: JSON.stringify(callerOf(ctx)) }),
      }),
    {
      router: { interceptors: opts.serverInterceptor === false ? [] : [serverAuthInterceptor(TOKEN)] },
      transport: { interceptors: opts.client ?? [] },
    },
  );
}

const headers =
  (h: Record<string, string>): Interceptor =>
  (next) =>
  (req) => {
    for (const [k, v] of Object.entries(h)) req.header.set(k, v);
    return next(req);
  };

const seen = async (t: ReturnType<typeof router>, opts?: ReturnType<typeof callAs>) =>
  JSON.parse((await createClient(OrchestratorService, t).getTaskStatus({ taskId: 'x' }, opts)).result) as RpcCaller;

/** The caller the handler sees for a call with these headers. */
const callerSeen = (h: Record<string, string>) => seen(router({ client: [headers(h)] }));

const user = { userId: randomUUID(), tenantId: randomUUID() };
const userHeaders = { 'x-caller-kind': 'user', 'x-caller-user-id': user.userId, 'x-caller-tenant-id': user.tenantId };

describe('serverAuthInterceptor', () => {
  it('puts the caller named by the headers into the context, once the token matches', async () => {
    expect(await callerSeen({ authorization: `Bearer ${TOKEN}`, ...userHeaders })).toEqual({ kind: 'user', ...user });
    expect(await callerSeen({ authorization: `bearer   ${TOKEN}`, 'x-caller-kind': 'system' })).toEqual({ kind: 'system' });
    expect(await callerSeen({ authorization: `Bearer ${TOKEN}`, 'x-caller-kind': 'anonymous' })).toEqual({ kind: 'anonymous' });
    // A user without a tenant is a user of no tenant.
    expect(await callerSeen({ authorization: `Bearer ${TOKEN}`, 'x-caller-kind': 'user', 'x-caller-user-id': user.userId })).toEqual({
      kind: 'user',
      userId: user.userId,
    });
  });

  it('refuses a missing, malformed or wrong token with Unauthenticated, before reading the caller', async () => {
    for (const authorization of [undefined, '', TOKEN, `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, 'Bearer ']) {
      const h: Record<string, string> = { ...userHeaders };
      if (authorization !== undefined) h.authorization = authorization;
      expect(await rpcFailure(callerSeen(h)), String(authorization)).toEqual({ code: Code.Unauthenticated, message: 'internal RPC token missing or invalid' });
    }
  });

  it('refuses a missing or invalid caller identity with Unauthenticated', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    for (const h of <Record<string, string>[]>[
      {},
      { 'x-caller-kind': 'admin' },
      { 'x-caller-kind': 'user' },
      { 'x-caller-kind': 'user', 'x-caller-user-id': 'not-a-uuid' },
      { 'x-caller-kind': 'user', 'x-caller-user-id': user.userId, 'x-caller-tenant-id': 'not-a-uuid' },
    ]) {
      const r = await rpcFailure(callerSeen({ ...auth, ...h }));
      expect(r.code, JSON.stringify(h)).toBe(Code.Unauthenticated);
      expect(r.message).toMatch(/caller identity missing or invalid/);
    }
  });

  it('a handler behind no interceptor refuses: no caller in its context', async () => {
    const c = createClient(OrchestratorService, router({ serverInterceptor: false }));
    expect(await rpcFailure(c.getTaskStatus({ taskId: 'x' }))).toEqual({ code: Code.Unauthenticated, message: 'no authenticated caller' });
  });
});

describe('clientAuthInterceptor and transportAs', () => {
  const server = router({ client: [clientAuthInterceptor(TOKEN)] });

  it('sends the token and the caller of the call; the server reads back the same caller', async () => {
    expect(await seen(server, callAs({ kind: 'user', ...user }))).toEqual({ kind: 'user', ...user });
    expect(await seen(server, callAs(SYSTEM_CALLER))).toEqual({ kind: 'system' });
  });

  it('a call without a caller is refused; transportAs supplies its default, and a call naming its own wins', async () => {
    expect((await rpcFailure(seen(server))).code).toBe(Code.Unauthenticated);
    const asUser = transportAs(server, { kind: 'user', ...user });
    expect(await seen(asUser)).toEqual({ kind: 'user', ...user });
    expect(await seen(asUser, callAs(SYSTEM_CALLER))).toEqual({ kind: 'system' });
  });

  it('the wrong token on the client side is refused', async () => {
    const wrong = router({ client: [clientAuthInterceptor('another-token')] });
    expect((await rpcFailure(seen(wrong, callAs(SYSTEM_CALLER)))).code).toBe(Code.Unauthenticated);
  });

  it('CALLER is the key both sides use', () => {
    expect(callAs(SYSTEM_CALLER).contextValues.get(CALLER)).toEqual({ kind: 'system' });
  });
});
