/**
 * /api/v1/sessions/{id}/files: workspace listing (JSON) and raw file download (streamed).
 * {id} is the session UUID or external id of the caller's session (another owner's or a
 * deleted session → 404 `Session not found`). Rules and decisions: src/workspace/workspace.ts and paths.ts.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import { badRequest } from '../kernel/index.js';
import { Workspace, parseWorkspacePath, type WorkspaceOptions } from '../workspace/index.js';
import { boolParam, fileErrorReply, wildcardPath } from './workspace-params.js';
import { sendFile, type SendState } from './workspace-send.js';
import { copyRequest, corsHeaders, route, writeReply, type Req } from './http.js';
import { requireSession, type RouteDeps } from './route-deps.js';

export function registerWorkspaceRoutes(app: TemplatedApp, deps: RouteDeps, opts: WorkspaceOptions = {}): void {
  const ws = new Workspace(deps.workspaceRoot, opts);

  route(
    app,
    'get',
    '/api/v1/sessions/:id/files',
    async (req) => {
      const { p, headers } = await deps.admit(req);
      const segs = parseWorkspacePath(req.query.get('path') ?? '/', { allowLeadingSlash: true });
      const recursive = boolParam(req.query, 'recursive');
      const s = await requireSession(deps.domains.sessionLookup, req.params[0], p);
      return { status: 200, headers, body: await ws.list(s.id, segs, recursive) };
    },
    deps.ctx,
  );

  app.get('/api/v1/sessions/:id/files/*', (res, rawReq) => {
    const state: SendState = { aborted: false };
    res.onAborted(() => {
      state.aborted = true;
      state.wake?.();
    });
    let req: Req | undefined;
    let cors: Record<string, string> = {};
    try {
      req = copyRequest(rawReq, 1); // decodes :id, which throws on a malformed escape
      cors = corsHeaders(deps.ctx.cors, req.headers.origin);
    } catch {
      cors = corsHeaders(deps.ctx.cors, rawReq.getHeader('origin'));
    }
    void (async () => {
      let rateHeaders: Record<string, string> = {};
      try {
        if (!req) throw badRequest('invalid session id: malformed percent-encoding');
        if (req.invalid) throw badRequest(req.invalid); // what route() refuses for every other route
        const { p, headers } = await deps.admit(req);
        rateHeaders = headers;
        const segs = parseWorkspacePath(wildcardPath(req.url, 5), { allowLeadingSlash: false });
        const s = await requireSession(deps.domains.sessionLookup, req.params[0], p);
        const f = await ws.openFile(s.id, segs);
        if (state.aborted) {
          await f.fh.close();
          return;
        }
        await sendFile(res, f, { ...cors, ...rateHeaders, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' }, state);
      } catch (err) {
        if (state.aborted) return;
        if (state.started) {
          deps.log.warn({ err }, 'workspace download failed mid-stream');
          return;
        }
        const reply = fileErrorReply(err, deps.log);
        writeReply(res, { ...reply, headers: { ...rateHeaders, ...reply.headers } }, cors);
      }
    })();
  });
}
