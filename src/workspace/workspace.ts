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
 *   `file is not UTF-8 text (binary content)`. Reading a whole file (`readFile`, the memory
 *   route's JSON download): exactly the download checks.
 */
import { constants as FS } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { badRequest, notFound } from '../kernel/index.js';
import {
  BINARY_MESSAGE,
  FileTooLargeError,
  WORKSPACE_MAX_FILE_BYTES,
  WORKSPACE_MAX_LIST_ENTRIES,
  type OpenedFile,
  type TextFile,
  type WorkspaceFileEntry,
  type WorkspaceListing,
  type WorkspaceOptions,
  type WrittenFile,
} from './model.js';
import { compareSegments, errno, fdRealPath, isInside, isMissing, realInside, toClientPath, traversal } from './paths.js';

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

  /** The session folder: always the UUID, never the external id (a user's UUID in the memory workspace, memory.ts). */
  dirFor(sessionId: string): string {
    if (!/^[0-9a-fA-F-]{36}$/.test(sessionId)) throw new Error(`not a folder UUID: ${sessionId}`);
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
      const bytes = await readPrefix(fh, Math.max(0, Math.min(size, maxBytes)));
      const truncated = size > bytes.byteLength;
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

  /** A whole file's bytes, after the download's checks (size cap included): for JSON downloads. */
  async readFile(sessionId: string, segs: string[]): Promise<{ path: string; bytes: Buffer }> {
    const { fh, size } = await this.openFile(sessionId, segs);
    try {
      return { path: toClientPath(segs), bytes: await readPrefix(fh, size) };
    } finally {
      await fh.close();
    }
  }
}

/** At most `want` bytes from the start of an open file (fewer when it shrank meanwhile). */
async function readPrefix(fh: FileHandle, want: number): Promise<Buffer> {
  const buf = Buffer.alloc(want);
  let got = 0;
  while (got < want) {
    const { bytesRead } = await fh.read(buf, got, want - got, got);
    if (bytesRead === 0) break; // shrunk meanwhile
    got += bytesRead;
  }
  return buf.subarray(0, got);
}
