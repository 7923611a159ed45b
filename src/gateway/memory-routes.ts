/**
 * /api/v1/memory/files: the caller's own memory (files agents keep for their user across
 * sessions with the file tools' `scope: "memory"`), listed and downloaded. Only ever the
 * authenticated caller's folder (`<workspace root>/memory/<user UUID>`, src/workspace/memory.ts):
 * no route names another user, so no user sees another's memory. An anonymous caller (no user)
 * has no memory: `/` lists empty, anything else is not found.
 *
 * The same pieces as the session workspace routes (workspace-routes.ts): the path rules and
 * their messages (`invalid path: traversal not allowed`, links leading out blocked), the
 * `recursive` parameter, the listing (entries sorted by path, `truncated` past 10,000) and the
 * 100 MB cap (413). Shapes, for the reference SDK's `list_memory_files` and
 * `download_memory_file`:
 * - listing: the session listing's `path`, `files` and `truncated`, with `success: true`, and
 *   each entry's size also as `size_bytes`;
 * - download: JSON `{success, path, content, content_type, size_bytes, encoding}`: text
 *   (content detected as text/plain or application/json) as it is (`encoding: "utf-8"`),
 *   anything else base64-encoded (`encoding: "base64"`); `content_type` detected from the
 *   bytes, as the session download's Content-Type.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import { notFound } from '../kernel/index.js';
import { detectContentType, memoryFolderOf, memoryWorkspace, parseWorkspacePath, type WorkspaceListing, type WorkspaceOptions } from '../workspace/index.js';
import { route } from './http.js';
import type { RouteDeps } from './route-deps.js';
import { boolParam, fileErrorReply, wildcardPath } from './workspace-params.js';

/** The listing as the memory route answers it. */
export function memoryListing(l: Pick<WorkspaceListing, 'path' | 'files' | 'truncated'>) {
  return {
    success: true,
    path: l.path,
    files: l.files.map((f) => ({ ...f, size_bytes: f.size })),
    ...(l.truncated ? { truncated: true } : {}),
  };
}

/** A whole file as the memory download answers it. */
export function memoryFile(path: string, bytes: Buffer) {
  const contentType = detectContentType(bytes, true);
  const text = contentType.startsWith('text/') || contentType === 'application/json';
  return {
    success: true,
    path,
    content: text ? bytes.toString('utf8') : bytes.toString('base64'),
    content_type: contentType,
    size_bytes: bytes.byteLength,
    encoding: text ? 'utf-8' : 'base64',
  };
}

export function registerMemoryRoutes(app: TemplatedApp, deps: RouteDeps, opts: WorkspaceOptions = {}): void {
  const memory = memoryWorkspace(deps.workspaceRoot, opts);

  route(
    app,
    'get',
    '/api/v1/memory/files',
    async (req) => {
      const { p, headers } = await deps.admit(req);
      const segs = parseWorkspacePath(req.query.get('path') ?? '/', { allowLeadingSlash: true });
      const recursive = boolParam(req.query, 'recursive');
      if (!p.userId) {
        if (segs.length) throw notFound('path not found');
        return { status: 200, headers, body: memoryListing({ path: '/', files: [] }) };
      }
      return { status: 200, headers, body: memoryListing(await memory.list(memoryFolderOf(p.userId), segs, recursive)) };
    },
    deps.ctx,
  );

  route(
    app,
    'get',
    '/api/v1/memory/files/*',
    async (req) => {
      const { p, headers } = await deps.admit(req);
      const segs = parseWorkspacePath(wildcardPath(req.url, 4), { allowLeadingSlash: false });
      if (!p.userId) throw notFound('file not found');
      const f = await memory.readFile(memoryFolderOf(p.userId), segs);
      return { status: 200, headers: { ...headers, 'Cache-Control': 'no-store' }, body: memoryFile(f.path, f.bytes) };
    },
    deps.ctx,
    { errors: fileErrorReply },
  );
}

const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
const ok = (name: string) => ({ description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } });
const err = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

export const memorySchemas = {
  MemoryListing: {
    type: 'object',
    required: ['success', 'path', 'files'],
    properties: {
      success: { type: 'boolean' },
      path: { type: 'string' },
      files: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'path', 'size', 'size_bytes', 'is_dir', 'modified_at'],
          properties: {
            name: { type: 'string' },
            path: { type: 'string', description: 'Relative to the memory root, starting with /' },
            size: { type: 'integer', description: 'Bytes; 0 for directories' },
            size_bytes: { type: 'integer', description: 'The same as size' },
            is_dir: { type: 'boolean' },
            modified_at: { type: 'string', format: 'date-time' },
          },
        },
      },
      truncated: { type: 'boolean', description: 'More than 10,000 entries: the list was cut' },
    },
  },
  MemoryFile: {
    type: 'object',
    required: ['success', 'path', 'content', 'content_type', 'size_bytes', 'encoding'],
    properties: {
      success: { type: 'boolean' },
      path: { type: 'string' },
      content: { type: 'string', description: 'The text, or the bytes base64-encoded (encoding)' },
      content_type: { type: 'string', description: 'Detected from the bytes' },
      size_bytes: { type: 'integer' },
      encoding: { type: 'string', enum: ['utf-8', 'base64'] },
    },
  },
};

export const memoryPaths = {
  '/api/v1/memory/files': {
    get: {
      summary: "List the caller's memory (files agents keep for the user across sessions, file tools' scope memory); sorted by path",
      operationId: 'listMemoryFiles',
      security,
      parameters: [
        { name: 'path', in: 'query', schema: { type: 'string', default: '/' }, description: 'Subdirectory' },
        { name: 'recursive', in: 'query', schema: { type: 'boolean', default: false } },
      ],
      responses: {
        200: ok('MemoryListing'),
        400: err('invalid path: traversal not allowed; path is not a directory; recursive must be a boolean'),
        401: err('Not authenticated'),
        404: err('path not found'),
      },
    },
  },
  '/api/v1/memory/files/{path}': {
    get: {
      summary: "Download a file of the caller's memory as JSON (text as is, anything else base64)",
      operationId: 'downloadMemoryFile',
      security,
      parameters: [{ name: 'path', in: 'path', required: true, schema: { type: 'string' }, description: 'File path inside the memory (may contain /)' }],
      responses: {
        200: ok('MemoryFile'),
        400: err('invalid path: traversal not allowed'),
        401: err('Not authenticated'),
        404: err('file not found, or path is a directory'),
        413: err('file exceeds maximum size limit (100MB)'),
      },
    },
  },
};
