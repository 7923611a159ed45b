/**
 * Per-session workspace files under `<workspaceRoot>/<session UUID>`: listing, download,
 * reading text and writing, for the gateway's routes and the agents' file tools.
 *
 * Guarantees (the full rules are in workspace.ts): no client path reaches outside its
 * session folder, neither by `..`, absolute paths or NUL bytes (paths.ts) nor through a
 * symbolic link (real paths are checked, writes open with O_NOFOLLOW); files over the size
 * cap are refused with 413 before anything is read or written; content types come from the
 * bytes, never from the name (content-type.ts).
 *
 * Per-user memory (memory.ts) is the same Workspace rooted at `<workspaceRoot>/memory`, one
 * folder per user UUID, under the same rules.
 */
export {
  BINARY_MESSAGE,
  FileTooLargeError,
  TOO_LARGE_MESSAGE,
  TRAVERSAL_MESSAGE,
  WORKSPACE_MAX_FILE_BYTES,
  WORKSPACE_MAX_LIST_ENTRIES,
  type OpenedFile,
  type TextFile,
  type WorkspaceFileEntry,
  type WorkspaceListing,
  type WorkspaceOptions,
  type WrittenFile,
} from './model.js';
export { decodeUrlPath, parseWorkspacePath } from './paths.js';
export { detectContentType } from './content-type.js';
export { Workspace } from './workspace.js';
export { MEMORY_DIR, NO_USER_MESSAGE, memoryFolderOf, memoryWorkspace } from './memory.js';
