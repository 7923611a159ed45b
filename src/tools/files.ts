/**
 * The file tools: `file_read`, `file_write` and `file_list`, working in the per-session
 * workspace (`<WORKSPACE_ROOT>/<session UUID>`, see ../workspace/paths.ts), the same folder the
 * HTTP files API lists and serves, so a file an agent writes can be downloaded by the client.
 *
 * `scope: "memory"` works in the user's memory instead (`<WORKSPACE_ROOT>/memory/<user UUID>`,
 * ../workspace/memory.ts): files kept for the task's user across sessions, listed and
 * downloaded with /api/v1/memory/files. A separate argument rather than a path prefix, so a
 * session file named `memory/...` stays a session file and a model cannot reach memory by a
 * path it did not mean. The user is the task's owner (`ctx.userId`); without one the memory
 * scope is refused with NO_USER_MESSAGE.
 *
 * Paths are the workspace's client paths (`/notes/a.md` or `notes/a.md`), parsed by
 * `parseWorkspacePath`; all path, containment (`..`, absolute paths, links leading out) and
 * size rules are the workspace's, and its refusals reach the caller as `bad_arguments` with the
 * workspace's message. The tools need a session (`ctx.sessionId`): without one there is no
 * workspace.
 */
import { AppError } from '../kernel/index.js';
import { NO_USER_MESSAGE, memoryFolderOf, memoryWorkspace, parseWorkspacePath, type Workspace } from '../workspace/index.js';
import { type Tool, type ToolContext, ToolError, type ToolOutput } from './tool.js';

export const FILE_READ_DEFAULT_BYTES = 256 * 1024;
export const FILE_READ_MAX_BYTES = 1024 * 1024;
const NO_SESSION_MESSAGE = 'file tools need a session: submit the task with a session_id';
const MAX_PATH_CHARS = 4096;

export type FileScope = 'session' | 'memory';

export interface FileReadArgs extends Record<string, unknown> {
  path: string;
  max_bytes?: number;
  scope?: FileScope;
}

export interface FileWriteArgs extends Record<string, unknown> {
  path: string;
  content: string;
  append?: boolean;
  scope?: FileScope;
}

export interface FileListArgs extends Record<string, unknown> {
  path?: string;
  recursive?: boolean;
  scope?: FileScope;
}

/** The session workspace and the users' memory: where a call's `scope` points. */
interface Places {
  session: Workspace;
  memory: Workspace;
}

const SCOPE_PARAM = {
  type: 'string',
  enum: ['session', 'memory'],
  default: 'session',
  description:
    "Where the path is: 'session' (default), this conversation's workspace, which the user downloads from the session; 'memory', the user's own memory, kept across all their sessions (notes, preferences, facts to remember)",
} as const;

/** The workspace and the folder in it that a call works in. */
function placeOf(places: Places, scope: unknown, ctx: ToolContext): { ws: Workspace; folder: string } {
  if (scope !== undefined && scope !== null && scope !== 'session' && scope !== 'memory')
    throw new ToolError("scope must be 'session' or 'memory'", 'bad_arguments');
  if (ctx.signal.aborted) throw new ToolError('the file call was cancelled', 'limit');
  if (scope === 'memory') {
    if (!ctx.userId) throw new ToolError(NO_USER_MESSAGE, 'bad_arguments');
    return { ws: places.memory, folder: workspaceCall(() => memoryFolderOf(ctx.userId)) };
  }
  if (!ctx.sessionId) throw new ToolError(NO_SESSION_MESSAGE, 'bad_arguments');
  return { ws: places.session, folder: ctx.sessionId };
}

function pathArg(v: unknown, fallback?: string): string[] {
  if (v === undefined && fallback !== undefined) v = fallback;
  if (typeof v !== 'string' || !v.trim()) throw new ToolError('path is required', 'bad_arguments');
  if (v.length > MAX_PATH_CHARS) throw new ToolError(`path is longer than ${MAX_PATH_CHARS} characters`, 'bad_arguments');
  return workspaceCall(() => parseWorkspacePath(v, { allowLeadingSlash: true }));
}

function boolArg(v: unknown, name: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new ToolError(`${name} must be a boolean`, 'bad_arguments');
  return v;
}

/**
 * Runs a workspace operation; the workspace's refusals (AppError: traversal, not found, too
 * large, binary) become `bad_arguments` with their message. File system failures become
 * `backend` without the host path (fs error messages name the real path).
 */
function workspaceCall<T>(fn: () => T): T {
  const map = (err: unknown): never => {
    if (err instanceof ToolError) throw err;
    if (err instanceof AppError) throw new ToolError(err.message, 'bad_arguments');
    const code = (err as NodeJS.ErrnoException)?.code;
    if (typeof code === 'string') throw new ToolError(`workspace error (${code})`, 'backend');
    throw new ToolError(err instanceof Error ? err.message : String(err), 'backend');
  };
  try {
    const r = fn();
    return (r instanceof Promise ? r.catch(map) : r) as T;
  } catch (err) {
    return map(err);
  }
}

function fileReadTool(places: Places): Tool<FileReadArgs> {
  return {
    name: 'file_read',
    description:
      "Read a UTF-8 text file from the session's workspace, or with scope 'memory' from the user's memory. Paths are relative to the workspace (a leading / is allowed). Large files are returned in part (max_bytes); binary files are refused.",
    category: 'file',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path in the workspace, e.g. /notes/todo.md', minLength: 1, maxLength: MAX_PATH_CHARS },
        max_bytes: {
          type: 'integer',
          description: `Bytes read at most (default ${FILE_READ_DEFAULT_BYTES}, at most ${FILE_READ_MAX_BYTES})`,
          minimum: 1,
          maximum: FILE_READ_MAX_BYTES,
          default: FILE_READ_DEFAULT_BYTES,
        },
        scope: SCOPE_PARAM,
      },
      required: ['path'],
      additionalProperties: false,
    },
    timeoutMs: 30_000,
    costPerUse: 0,
    dangerous: false,
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const { ws, folder } = placeOf(places, args.scope, ctx);
      const segs = pathArg(args.path);
      let maxBytes = FILE_READ_DEFAULT_BYTES;
      if (args.max_bytes !== undefined && args.max_bytes !== null) {
        const n = args.max_bytes;
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw new ToolError('max_bytes must be a positive integer', 'bad_arguments');
        maxBytes = Math.min(n, FILE_READ_MAX_BYTES);
      }
      const f = await workspaceCall(() => ws.readText(folder, segs, maxBytes));
      return {
        output: { path: f.path, content: f.content, size: f.size, truncated: f.truncated },
        text: f.truncated ? `${f.content}\n\n[truncated: first ${maxBytes} of ${f.size} bytes of ${f.path}]` : f.content,
        metadata: { bytes: f.size },
      };
    },
  };
}

function fileWriteTool(places: Places): Tool<FileWriteArgs> {
  return {
    name: 'file_write',
    description:
      "Write a UTF-8 text file in the session's workspace (replacing it, or appending with append: true). Missing folders are created. The user can download the files from the session. With scope 'memory' the file goes to the user's memory instead, kept across all their sessions: use it for what should be remembered next time.",
    category: 'file',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path in the workspace, e.g. /report.md', minLength: 1, maxLength: MAX_PATH_CHARS },
        content: { type: 'string', description: 'The text to write' },
        append: { type: 'boolean', description: 'Append to the file instead of replacing it (default false)', default: false },
        scope: SCOPE_PARAM,
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    timeoutMs: 30_000,
    costPerUse: 0,
    dangerous: false,
    // Appending twice is not the same as appending once.
    retryable: false,
    async run(args, ctx): Promise<ToolOutput> {
      const { ws, folder } = placeOf(places, args.scope, ctx);
      const segs = pathArg(args.path);
      if (typeof args.content !== 'string') throw new ToolError('content must be a string', 'bad_arguments');
      const content = args.content;
      const append = boolArg(args.append, 'append');
      const f = await workspaceCall(() => ws.writeFile(folder, segs, content, { append }));
      const written = Buffer.byteLength(content, 'utf8');
      return {
        output: { path: f.path, size: f.size, bytes_written: written, appended: append },
        text: `${append ? 'Appended' : 'Wrote'} ${written} bytes to ${f.path} (now ${f.size} bytes).`,
      };
    },
  };
}

function fileListTool(places: Places): Tool<FileListArgs> {
  return {
    name: 'file_list',
    description:
      "List the files of the session's workspace, or with scope 'memory' of the user's memory (a folder, default /; recursive: true for its whole tree).",
    category: 'file',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Folder in the workspace (default /)', default: '/', maxLength: MAX_PATH_CHARS },
        recursive: { type: 'boolean', description: 'Include the contents of sub-folders (default false)', default: false },
        scope: SCOPE_PARAM,
      },
      additionalProperties: false,
    },
    timeoutMs: 30_000,
    costPerUse: 0,
    dangerous: false,
    retryable: true,
    async run(args, ctx): Promise<ToolOutput> {
      const { ws, folder } = placeOf(places, args.scope, ctx);
      const segs = pathArg(args.path, '/');
      const recursive = boolArg(args.recursive, 'recursive');
      const l = await workspaceCall(() => ws.list(folder, segs, recursive));
      const lines = l.files.map((f) => (f.is_dir ? `${f.path}/` : `${f.path} (${f.size} bytes)`));
      const text = lines.length ? lines.join('\n') : `${l.path} is empty`;
      return {
        output: { path: l.path, files: l.files, truncated: l.truncated ?? false },
        text: l.truncated ? `${text}\n[truncated: more entries than listed]` : text,
        metadata: { count: l.files.length },
      };
    },
  };
}

/** `file_read`, `file_write` and `file_list` over one workspace and, beside it, the users' memory (same root, same limits). */
export function fileTools(ws: Workspace): Tool[] {
  const places: Places = { session: ws, memory: memoryWorkspace(ws.root, { maxFileBytes: ws.maxFileBytes, maxListEntries: ws.maxListEntries }) };
  return [fileReadTool(places), fileWriteTool(places), fileListTool(places)] as Tool[];
}
