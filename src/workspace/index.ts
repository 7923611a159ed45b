/**
 * Per-session workspace files: listing and single-file access under
 * `<workspaceRoot>/<session UUID>`.
 *
 * The spec says that when the sandbox executor is unavailable the gateway reads the local
 * filesystem instead. There is no sandbox executor yet, so reading the local filesystem IS
 * the implementation; a remote executor would slot in behind `Workspace`.
 *
 * Path rules (decided here, documented in the tests):
 * - A client path is relative to the workspace root; one leading `/` is allowed (`/sub` and
 *   `sub` are the same). `.` and empty segments are dropped.
 * - A `..` segment anywhere (also `\`-separated, also after percent-decoding), an absolute
 *   path (`//x`, `\x`, a drive such as `C:`), or a NUL byte → 400
 *   `invalid path: traversal not allowed`.
 * - Every path is resolved with realpath; a real path outside the session folder (a
 *   symbolic link pointing out) → 400 with the same message. Links that stay inside work.
 * - Listing: a session that has no folder yet lists `/` as empty (200, `files: []`): the
 *   workspace is created lazily by the first agent that writes; any other missing path → 404
 *   `path not found`; a file given as `path` → 400 `path is not a directory`.
 *   Entries are sorted by path, compared segment by segment (so, recursively, a directory is
 *   directly followed by its contents). Symbolic links are shown with their target's type and
 *   size, links leading outside the workspace or nowhere are left out, and recursion does not
 *   descend into linked directories (no cycles). At most `maxListEntries` entries are
 *   returned; beyond that the answer carries `truncated: true`.
 * - Download: missing → 404 `file not found`; a directory → 404 `path is a directory`; not a
 *   regular file (FIFO, socket, device) → 404 `file not found`; over `maxFileBytes`
 *   (100 MB) → 413 `file exceeds maximum size limit (100MB)`, decided by stat without reading.
 * - Writing (`writeFile`, used by the agents' file tools): the session folder and missing
 *   parent directories are created on the way. Every existing component is resolved with
 *   realpath and must stay inside the session folder (links that stay inside work, links out
 *   → `invalid path: traversal not allowed`); the file itself is opened with O_NOFOLLOW and
 *   its opened real path checked again, so a link swapped in meanwhile cannot redirect the
 *   write. The root or a directory → 400 `path is a directory`; a parent that is a file →
 *   400 `path is not a directory`; anything but a regular file → 400 `not a regular file`;
 *   a result over `maxFileBytes` → 413 as for downloads, checked before anything is written.
 * - Reading text (`readText`): the download checks, except that a file over `maxFileBytes` is
 *   read in part (at most `maxBytes`); NUL bytes or invalid UTF-8 → 400
 *   `file is not UTF-8 text (binary content)`.
 */
import { constants as FS } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { AppError, Code, badRequest, notFound } from '../kernel/index.js';

export const WORKSPACE_MAX_FILE_BYTES = 100 * 1024 * 1024;
export const WORKSPACE_MAX_LIST_ENTRIES = 10_000;
export const TRAVERSAL_MESSAGE = 'invalid path: traversal not allowed';
export const TOO_LARGE_MESSAGE = 'file exceeds maximum size limit (100MB)';
export const BINARY_MESSAGE = 'file is not UTF-8 text (binary content)';

export interface WorkspaceOptions {
  /** Download cap in bytes (default 100 MB); lowered in tests. */
  maxFileBytes?: number;
  /** Listing cap (default 10 000 entries). */
  maxListEntries?: number;
}

export interface WorkspaceFileEntry {
  name: string;
  path: string;
  size: number;
  is_dir: boolean;
  modified_at: string;
}

export interface WorkspaceListing {
  session_id: string;
  path: string;
  files: WorkspaceFileEntry[];
  truncated?: boolean;
}

/** 413: the HTTP layer maps it by class (ResourceExhausted alone means 429 elsewhere). */
export class FileTooLargeError extends AppError {
  override name = 'FileTooLargeError';
  constructor() {
    super(Code.ResourceExhausted, TOO_LARGE_MESSAGE, { isPublic: true });
  }
}

const traversal = () => badRequest(TRAVERSAL_MESSAGE);

/**
 * Validates a decoded client path and returns its segments (empty for the root).
 * `allowLeadingSlash`: the listing's `path` query is written `/sub`; the download's wildcard
 * part comes after `/files/` so any leading slash there means an absolute path.
 */
export function parseWorkspacePath(raw: string, opts: { allowLeadingSlash: boolean }): string[] {
  if (raw.includes('\0')) throw traversal();
  let p = raw;
  if (opts.allowLeadingSlash && p.startsWith('/') && !p.startsWith('//')) p = p.slice(1);
  if (p.startsWith('/') || p.startsWith('\\') || /^[A-Za-z]:/.test(p)) throw traversal();
  const segs = p.split(/[\\/]/);
  if (segs.some((s) => s === '..')) throw traversal();
  return segs.filter((s) => s !== '' && s !== '.');
}

/** Decodes a raw (percent-encoded) URL path part; malformed escapes → 400. */
export function decodeUrlPath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest('invalid path: malformed percent-encoding');
  }
}

const toClientPath = (segs: string[]) => '/' + segs.join('/');

function isInside(base: string, real: string): boolean {
  return real === base || real.startsWith(base.endsWith(sep) ? base : base + sep);
}

function compareSegments(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}

const errno = (err: unknown) => (err as NodeJS.ErrnoException)?.code;
const isMissing = (err: unknown) => ['ENOENT', 'ENOTDIR', 'ELOOP'].includes(errno(err) ?? '');

export interface WrittenFile {
  /** Client path (`/a/b.txt`). */
  path: string;
  /** Size of the file after the write. */
  size: number;
}

export interface TextFile {
  /** Client path (`/a/b.txt`). */
  path: string;
  /** At most `maxBytes` of the file, decoded as UTF-8 (an incomplete last character is dropped). */
  content: string;
  /** Size of the whole file in bytes. */
  size: number;
  /** Whether the file has more than was read. */
  truncated: boolean;
}

/**
 * Real path of a link found while writing; it must exist and stay inside `base` (a dangling
 * link is refused too: following it would create its target, which could be anywhere).
 */
async function realInside(base: string, link: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(link);
  } catch (err) {
    if (isMissing(err)) throw traversal();
    throw err;
  }
  if (!isInside(base, real)) throw traversal();
  return real;
}

/** Real path of an open descriptor (Linux), or undefined where /proc is not available. */
async function fdRealPath(fh: FileHandle): Promise<string | undefined> {
  try {
    return await realpath(`/proc/self/fd/${fh.fd}`);
  } catch {
    return undefined;
  }
}

export interface OpenedFile {
  fh: FileHandle;
  size: number;
  /** Real path of the file (for logs). */
  real: string;
}

export class Workspace {
  readonly maxFileBytes: number;
  readonly maxListEntries: number;

  constructor(
    readonly root: string,
    opts: WorkspaceOptions = {},
  ) {
    this.maxFileBytes = opts.maxFileBytes ?? WORKSPACE_MAX_FILE_BYTES;
    this.maxListEntries = opts.maxListEntries ?? WORKSPACE_MAX_LIST_ENTRIES;
  }

  /** The session folder: always the UUID, never the external id. */
  dirFor(sessionId: string): string {
    if (!/^[0-9a-fA-F-]{36}$/.test(sessionId)) throw new Error(`not a session UUID: ${sessionId}`);
    return join(this.root, sessionId);
  }

  /** Real path of the session folder, or undefined when it does not exist yet. */
  private async base(sessionId: string): Promise<string | undefined> {
    try {
      const real = await realpath(this.dirFor(sessionId));
      if (!(await stat(real)).isDirectory()) return undefined;
      return real;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /** Real path of `segs` inside `base`; a path leaving `base` → 400, missing → undefined. */
  private async resolve(base: string, segs: string[]): Promise<string | undefined> {
    try {
      const real = await realpath(join(base, ...segs));
      if (!isInside(base, real)) throw traversal();
      return real;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async list(sessionId: string, segs: string[], recursive: boolean): Promise<WorkspaceListing> {
    const path = toClientPath(segs);
    const base = await this.base(sessionId);
    if (!base) {
      if (segs.length === 0) return { session_id: sessionId, path, files: [] };
      throw notFound('path not found');
    }
    const dir = await this.resolve(base, segs);
    if (!dir) throw notFound('path not found');
    const dst = await stat(dir).catch((err: unknown) => {
      if (isMissing(err)) throw notFound('path not found'); // removed meanwhile
      throw err;
    });
    if (!dst.isDirectory()) throw badRequest('path is not a directory');

    const files: WorkspaceFileEntry[] = [];
    let truncated = false;
    const walk = async (realDir: string, clientDir: string[]): Promise<void> => {
      let names;
      try {
        names = await readdir(realDir, { withFileTypes: true });
      } catch (err) {
        if (isMissing(err)) return; // removed while listing
        throw err;
      }
      for (const d of names) {
        if (files.length >= this.maxListEntries) {
          truncated = true;
          return;
        }
        const full = join(realDir, d.name);
        const clientSegs = [...clientDir, d.name];
        let st;
        let linked = false;
        try {
          if (d.isSymbolicLink()) {
            linked = true;
            const target = await realpath(full);
            if (!isInside(base, target)) continue; // blocked: leads out of the workspace
            st = await stat(target);
          } else {
            st = await lstat(full);
          }
        } catch (err) {
          if (isMissing(err)) continue; // dangling link or removed meanwhile
          throw err;
        }
        const isDir = st.isDirectory();
        if (!isDir && !st.isFile()) continue; // sockets, FIFOs, devices are not workspace files
        files.push({ name: d.name, path: toClientPath(clientSegs), size: isDir ? 0 : st.size, is_dir: isDir, modified_at: st.mtime.toISOString() });
        if (recursive && isDir && !linked) await walk(full, clientSegs);
      }
    };
    await walk(dir, segs);
    files.sort((a, b) => compareSegments(a.path, b.path));
    return truncated ? { session_id: sessionId, path, files, truncated } : { session_id: sessionId, path, files };
  }

  /**
   * Opens a regular file for download after the path, containment and size checks. The
   * caller owns (and must close) the handle. The real path is opened with O_NOFOLLOW so the
   * last component cannot be swapped for a link between the check and the open.
   */
  async openFile(sessionId: string, segs: string[], opts: { ignoreSizeCap?: boolean } = {}): Promise<OpenedFile> {
    const capped = !opts.ignoreSizeCap;
    const base = await this.base(sessionId);
    if (!base) throw notFound('file not found');
    const real = await this.resolve(base, segs);
    if (!real) throw notFound('file not found');
    const st = await stat(real).catch((err: unknown) => {
      if (isMissing(err)) throw notFound('file not found'); // removed meanwhile
      throw err;
    });
    if (st.isDirectory()) throw notFound('path is a directory');
    if (!st.isFile()) throw notFound('file not found');
    if (capped && st.size > this.maxFileBytes) throw new FileTooLargeError();
    let fh: FileHandle;
    try {
      fh = await open(real, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK);
    } catch (err) {
      if (isMissing(err)) throw notFound('file not found');
      throw err;
    }
    try {
      const fst = await fh.stat();
      if (!fst.isFile()) throw notFound('file not found');
      if (capped && fst.size > this.maxFileBytes) throw new FileTooLargeError();
      return { fh, size: fst.size, real };
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  /** Creates the session folder when missing and returns its real path. */
  async ensureSessionDir(sessionId: string): Promise<string> {
    const dir = this.dirFor(sessionId);
    await mkdir(this.root, { recursive: true });
    try {
      await mkdir(dir);
    } catch (err) {
      if (errno(err) !== 'EEXIST') throw err;
    }
    const base = await this.base(sessionId);
    if (!base) throw new Error(`session folder is not a directory: ${sessionId}`);
    return base;
  }

  /**
   * Writes (or appends to) a file, creating the session folder and parent directories as
   * needed. See the module comment for the containment rules.
   */
  async writeFile(sessionId: string, segs: string[], data: Uint8Array | string, opts: { append?: boolean } = {}): Promise<WrittenFile> {
    // The segments normally come from parseWorkspacePath; checked again since this writes.
    if (segs.some((s) => s === '' || s === '.' || s === '..' || /[\\/\0]/.test(s))) throw traversal();
    if (segs.length === 0) throw badRequest('path is a directory');
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (!opts.append && bytes.byteLength > this.maxFileBytes) throw new FileTooLargeError();
    const path = toClientPath(segs);
    const base = await this.ensureSessionDir(sessionId);

    // Parent directories: existing ones resolved (and kept inside), missing ones created.
    let dir = base;
    for (const seg of segs.slice(0, -1)) {
      const next = join(dir, seg);
      for (;;) {
        let st;
        try {
          st = await lstat(next);
        } catch (err) {
          if (errno(err) !== 'ENOENT') throw err;
          try {
            await mkdir(next);
          } catch (e) {
            if (errno(e) === 'EEXIST') continue; // created meanwhile: look again
            throw e;
          }
          dir = next;
          break;
        }
        if (st.isSymbolicLink()) {
          const real = await realInside(base, next);
          if (!(await stat(real)).isDirectory()) throw badRequest('path is not a directory');
          dir = real;
        } else if (st.isDirectory()) {
          dir = next;
        } else {
          throw badRequest('path is not a directory');
        }
        break;
      }
    }

    // The file itself: an existing link is followed only when it stays inside.
    let target = join(dir, segs[segs.length - 1]);
    const lst = await lstat(target).catch((err: unknown) => {
      if (errno(err) === 'ENOENT') return undefined;
      throw err;
    });
    if (lst?.isSymbolicLink()) {
      target = await realInside(base, target);
    }
    if (lst) {
      const st = await stat(target).catch((err: unknown) => {
        if (errno(err) === 'ENOENT') return undefined; // removed meanwhile: created below
        throw err;
      });
      if (st?.isDirectory()) throw badRequest('path is a directory');
      if (st && !st.isFile()) throw badRequest('not a regular file');
    }

    let fh: FileHandle;
    let created = false;
    const flags = FS.O_WRONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK | (opts.append ? FS.O_APPEND : 0);
    try {
      try {
        fh = await open(target, flags | FS.O_CREAT | FS.O_EXCL, 0o644);
        created = true;
      } catch (err) {
        if (errno(err) !== 'EEXIST') throw err;
        fh = await open(target, flags);
      }
    } catch (err) {
      const code = errno(err);
      if (code === 'ELOOP') throw traversal(); // a link appeared in place of the file
      if (code === 'EISDIR') throw badRequest('path is a directory');
      if (code === 'ENOENT' || code === 'ENOTDIR') throw badRequest('path is not a directory'); // a parent changed meanwhile
      if (code === 'ENXIO') throw badRequest('not a regular file'); // a FIFO without reader
      throw err;
    }
    try {
      // Where the descriptor really is: a parent swapped for a link between the checks and
      // the open would show here, before anything is written.
      const real = await fdRealPath(fh);
      if (real !== undefined && !isInside(base, real)) {
        if (created) await unlink(real).catch(() => {});
        throw traversal();
      }
      const fst = await fh.stat();
      if (!fst.isFile()) throw badRequest('not a regular file');
      const size = opts.append ? fst.size + bytes.byteLength : bytes.byteLength;
      if (size > this.maxFileBytes) throw new FileTooLargeError();
      if (!opts.append) await fh.truncate(0);
      let off = 0;
      while (off < bytes.byteLength) {
        const { bytesWritten } = await fh.write(bytes, off, bytes.byteLength - off, opts.append ? null : off);
        off += bytesWritten;
      }
      return { path, size: (await fh.stat()).size };
    } finally {
      await fh.close();
    }
  }

  /**
   * Reads at most `maxBytes` of a file as UTF-8 text. The download's checks apply, except the
   * size cap (a large file is read in part); binary content → 400 `BINARY_MESSAGE`.
   */
  async readText(sessionId: string, segs: string[], maxBytes: number): Promise<TextFile> {
    const { fh, size } = await this.openFile(sessionId, segs, { ignoreSizeCap: true });
    try {
      const want = Math.max(0, Math.min(size, maxBytes));
      const buf = Buffer.alloc(want);
      let got = 0;
      while (got < want) {
        const { bytesRead } = await fh.read(buf, got, want - got, got);
        if (bytesRead === 0) break; // shrunk meanwhile
        got += bytesRead;
      }
      const truncated = size > got;
      const bytes = buf.subarray(0, got);
      if (bytes.includes(0)) throw badRequest(BINARY_MESSAGE);
      let content: string;
      try {
        // stream: a cut inside a multi-byte character is not an error, the partial one is dropped.
        content = new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: truncated });
      } catch {
        throw badRequest(BINARY_MESSAGE);
      }
      return { path: toClientPath(segs), content, size, truncated };
    } finally {
      await fh.close();
    }
  }
}

/**
 * Content type from the bytes, never from the name. `complete`: `buf` is the whole file (a
 * prefix of a larger file is classified as text when the prefix is valid UTF-8, and never as
 * JSON, which needs the whole document to parse).
 */
export function detectContentType(buf: Uint8Array, complete: boolean): string {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const starts = (sig: number[], at = 0) => b.length >= at + sig.length && sig.every((v, i) => b[at + i] === v);
  const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts(ascii('GIF87a')) || starts(ascii('GIF89a'))) return 'image/gif';
  if (starts(ascii('RIFF')) && starts(ascii('WEBP'), 8)) return 'image/webp';
  if (starts(ascii('%PDF-'))) return 'application/pdf';
  if (starts([0x50, 0x4b, 0x03, 0x04]) || starts([0x50, 0x4b, 0x05, 0x06]) || starts([0x50, 0x4b, 0x07, 0x08])) return 'application/zip';
  if (starts([0x1f, 0x8b])) return 'application/gzip';
  // NUL bytes are valid UTF-8 but mark binary data in practice.
  if (b.includes(0)) return 'application/octet-stream';
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(b, { stream: !complete });
  } catch {
    return 'application/octet-stream';
  }
  if (complete) {
    const t = text.replace(/^\uFEFF/, '').trimStart();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        JSON.parse(t);
        return 'application/json';
      } catch {
        /* text */
      }
    }
  }
  return 'text/plain; charset=utf-8';
}
