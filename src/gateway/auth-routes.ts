/**
 * /api/v1/auth/*: register, login, refresh (no authentication), me, refresh-key and API keys
 * (authenticated user required).
 */
import type { TemplatedApp } from 'uWebSockets.js';
import type { AuthService } from '../auth/index.js';
import { badRequest, unauthenticated, type Logger, type Principal } from '../kernel/index.js';
import { parseJsonBody, route, type CorsPolicy, type Req } from './http.js';
import { admitted, type Admit } from './route-deps.js';

/** The principal must be a real user (not the anonymous development principal). */
function user(p: Principal): Principal {
  if (p.anonymous || !p.userId) throw unauthenticated();
  return p;
}

export function registerAuthRoutes(app: TemplatedApp, ctx: { cors: CorsPolicy; log: Logger }, auth: AuthService, admit: Admit): void {
  const authed = (h: (req: Req, p: Principal) => Promise<unknown>, status = 200) => admitted(admit, (req, p) => h(req, user(p)), status);
  const open =
    (h: (req: Req) => Promise<unknown>, status = 200) =>
    async (req: Req) => ({ status, body: await h(req) });
  const withBody = { body: true } as const;

  route(
    app,
    'post',
    '/api/v1/auth/register',
    open((req) => auth.register(jsonObject(req)), 201),
    ctx,
    withBody,
  );
  route(
    app,
    'post',
    '/api/v1/auth/login',
    open((req) => auth.login(jsonObject(req))),
    ctx,
    withBody,
  );
  route(
    app,
    'post',
    '/api/v1/auth/refresh',
    open((req) => auth.refresh(jsonObject(req))),
    ctx,
    withBody,
  );
  route(
    app,
    'get',
    '/api/v1/auth/me',
    authed((_req, p) => auth.me(p)),
    ctx,
  );
  route(
    app,
    'post',
    '/api/v1/auth/refresh-key',
    authed((_req, p) => auth.regenerateDefaultKey(p)),
    ctx,
  );
  route(
    app,
    'get',
    '/api/v1/auth/api-keys',
    authed((_req, p) => auth.listApiKeys(p)),
    ctx,
  );
  route(
    app,
    'post',
    '/api/v1/auth/api-keys',
    authed((req, p) => auth.createApiKey(p, jsonObject(req)), 201),
    ctx,
    withBody,
  );
  route(
    app,
    'del',
    '/api/v1/auth/api-keys/:id',
    authed((req, p) => auth.revokeApiKey(p, req.params[0])),
    ctx,
  );
}

function jsonObject(req: Req): Record<string, unknown> {
  const b = parseJsonBody(req);
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw badRequest('request body must be a JSON object');
  return b as Record<string, unknown>;
}
