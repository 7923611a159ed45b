/**
 * Authentication seam (credential parsing and the policy in force; no HTTP types: the gateway
 * hands over headers and query). Every protected route asks `authenticate()` for a Principal.
 * With GATEWAY_SKIP_AUTH=1 (the development default) every caller is the anonymous
 * principal, unless it presents credentials that verify. The verifier (AuthService in
 * service.ts: API keys, JWTs) plugs in here; without one, enforcement (GATEWAY_SKIP_AUTH=0)
 * rejects every protected request with 401 rather than letting anything through.
 */
import { ANONYMOUS, unauthenticated, type Principal } from '../kernel/index.js';

export interface AuthInput {
  headers: Record<string, string>;
  query?: URLSearchParams;
  /** SSE endpoints accept the api_key query parameter as a fallback. */
  allowQueryKey?: boolean;
}

export interface Authenticator {
  authenticate(input: AuthInput): Promise<Principal> | Principal;
}

export function credentialOf(input: AuthInput): string | undefined {
  const h = input.headers;
  if (h['x-api-key']) return h['x-api-key'];
  const auth = h.authorization;
  if (auth && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim();
  if (input.allowQueryKey) return input.query?.get('api_key') ?? undefined;
  return undefined;
}

/** The authenticator in force: skip -> anonymous; otherwise the configured verifier. */
export function createAuthenticator(opts: { skipAuth: boolean; verifier?: Authenticator }): Authenticator {
  if (opts.skipAuth) {
    // Development: anonymous, unless the caller presents credentials that verify (so a
    // registered user still acts as themselves); credentials that do not verify are ignored.
    const v = opts.verifier;
    if (!v) return { authenticate: () => ANONYMOUS };
    return {
      async authenticate(input) {
        if (!credentialOf(input)) return ANONYMOUS;
        try {
          return await v.authenticate(input);
        } catch {
          return ANONYMOUS;
        }
      },
    };
  }
  return {
    authenticate(input) {
      const cred = credentialOf(input);
      if (!cred) throw unauthenticated();
      if (!opts.verifier) throw unauthenticated(cred.startsWith('sk_') ? 'Invalid API key' : 'Invalid or expired token');
      return opts.verifier.authenticate(input);
    },
  };
}
