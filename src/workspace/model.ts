/** What the workspace hands out: its limits, messages, listing entries, files, and the 413 error. */
import type { FileHandle } from 'node:fs/promises';
import { AppError, Code } from '../kernel/index.js';

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

export interface OpenedFile {
  fh: FileHandle;
  size: number;
  /** Real path of the file (for logs). */
  real: string;
}
