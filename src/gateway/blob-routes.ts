/**
 * GET /api/v1/blob/{key}: the bytes behind a blob reference in a tool's output (a screenshot
 * over 500 KB), with the content type it was stored with, to the principal that stored it.
 * Anyone else, a malformed key and a missing or expired blob all get the same 404 `Blob not
 * found` (a key's existence is not revealed). The route never answers 5xx: a store that cannot
 * be read is logged and answered 404 too (the client can only retry either way). Rules of the
 * store (owner metadata, retention): src/bus/blobs.ts.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import { isBlobKey } from '../bus/index.js';
import { notFound } from '../kernel/index.js';
import { errorReply, route, type Reply } from './http.js';
import type { RouteDeps } from './route-deps.js';

const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
const errorBody = { $ref: '#/components/schemas/Error' };

export const blobPaths = {
  '/api/v1/blob/{key}': {
    get: {
      summary: "A blob's bytes (a large screenshot referenced by a tool's output), to the user who stored it",
      operationId: 'getBlob',
      security,
      parameters: [
        {
          name: 'key',
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: '^b[0-9a-f]{32}$' },
          description: "The reference's blob_key (also in its url: /api/v1/blob/<key>)",
        },
      ],
      responses: {
        200: {
          description: 'The bytes, with the Content-Type they were stored with (image/png for screenshots)',
          content: {
            'image/png': { schema: { type: 'string', format: 'binary' } },
            'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
          },
        },
        401: { description: 'Not authenticated', content: { 'application/json': { schema: errorBody } } },
        404: { description: 'Blob not found: no such key, expired, or stored by someone else', content: { 'application/json': { schema: errorBody } } },
      },
    },
  },
};

export function registerBlobRoutes(app: TemplatedApp, deps: RouteDeps): void {
  route(
    app,
    'get',
    '/api/v1/blob/:key',
    async (req): Promise<Reply> => {
      const { p, headers } = await deps.admit(req);
      const key = req.params[0] ?? '';
      if (!isBlobKey(key)) throw notFound('Blob not found');
      let blob;
      try {
        blob = await deps.bus.kv.blobs.getOwned(key, { userId: p.userId, tenantId: p.tenantId });
      } catch (err) {
        deps.log.warn({ err, key }, 'blob store read failed; answered 404');
        blob = undefined;
      }
      if (!blob) throw notFound('Blob not found');
      return {
        status: 200,
        headers: { ...headers, 'Content-Type': blob.contentType, 'Cache-Control': 'private, max-age=3600', 'X-Content-Type-Options': 'nosniff' },
        raw: Buffer.from(blob.bytes.buffer, blob.bytes.byteOffset, blob.bytes.byteLength),
      };
    },
    deps.ctx,
    {
      // Authentication and rate limits answer as everywhere (401, 429); anything else that is not a 4xx is a 404 here.
      errors: (err, log) => {
        const r = errorReply(err, log);
        return r.status >= 500 ? { status: 404, body: { error: 'Blob not found' } } : r;
      },
    },
  );
}
