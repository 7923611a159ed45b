/**
 * Identity: who a request acts for. `Principal` is what authentication yields at the edge
 * (HTTP); `RpcCaller` is the identity an internal RPC call carries (in the CALLER context
 * value, turned into headers by rpc/'s client interceptor and back by its server interceptor).
 */
import { createContextKey, createContextValues, type ContextValues } from '@connectrpc/connect';
import { unauthenticated } from './errors.js';

export interface Principal {
  /** Undefined for the anonymous development principal. */
  userId?: string;
  tenantId?: string;
  /** Key used for rate limiting and idempotency scoping. */
  key: string;
  anonymous: boolean;
}

export const ANONYMOUS: Principal = Object.freeze({ key: 'anonymous', anonymous: true });

export type RpcCaller = { kind: 'user'; userId: string; tenantId?: string } | { kind: 'anonymous' } | { kind: 'system' };

export const SYSTEM_CALLER: RpcCaller = Object.freeze({ kind: 'system' });
export const ANONYMOUS_CALLER: RpcCaller = Object.freeze({ kind: 'anonymous' });

/**
 * Server side: the authenticated caller, set by the server interceptor. Client side: the
 * caller a call is made for, turned into headers by the client interceptor.
 */
export const CALLER = createContextKey<RpcCaller | undefined>(undefined, { description: 'internal RPC caller' });

/** Call options that make a call on behalf of `c`. */
export const callAs = (c: RpcCaller): { contextValues: ContextValues } => ({ contextValues: createContextValues().set(CALLER, c) });

/** The RPC caller for a gateway principal: a user, or the anonymous development principal. */
export function callerOfPrincipal(p: Principal): RpcCaller {
  if (p.anonymous) return ANONYMOUS_CALLER;
  // Fail closed: an authenticated principal without a user must not become "see everything".
  if (!p.userId) throw unauthenticated('principal without a user id');
  return { kind: 'user', userId: p.userId, tenantId: p.tenantId };
}
