/**
 * /api/v1/sessions: list (limit/offset), details, history, events grouped by turn, PATCH
 * title, soft DELETE (204, idempotent). {sessionId} is the UUID or the external id.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import { Sessions } from '../sessions/index.js';
import { intParam, parseJsonBody, route, type Req } from './http.js';
import type { Principal } from './auth.js';
import { admitted, type RouteDeps } from './route-deps.js';

export function registerSessionRoutes(app: TemplatedApp, d: RouteDeps): void {
  const sessions = new Sessions(d.store.sql);
  const h = (fn: (req: Req, p: Principal) => Promise<unknown>, status = 200) => admitted(d.admit, fn, status);
  route(app, 'get', '/api/v1/sessions', h((req, p) => sessions.list(p, intParam(req.query, 'limit', 20, 1, 100), intParam(req.query, 'offset', 0, 0, 1_000_000_000))), d.ctx);
  route(app, 'get', '/api/v1/sessions/:id', h((req, p) => sessions.get(p, req.params[0])), d.ctx);
  route(app, 'get', '/api/v1/sessions/:id/history', h((req, p) => sessions.history(p, req.params[0], intParam(req.query, 'limit', 100, 1, 1000))), d.ctx);
  route(app, 'get', '/api/v1/sessions/:id/events', h((req, p) => sessions.events(p, req.params[0], intParam(req.query, 'limit', 50, 1, 500))), d.ctx);
  route(app, 'patch', '/api/v1/sessions/:id', h((req, p) => sessions.updateTitle(p, req.params[0], parseJsonBody(req))), d.ctx, { body: true });
  route(app, 'del', '/api/v1/sessions/:id', h((req, p) => sessions.softDelete(p, req.params[0]), 204), d.ctx);
}
