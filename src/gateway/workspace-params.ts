/**
 * What the file routes share, the session workspace (workspace-routes.ts) and the user's
 * memory (memory-routes.ts): the `recursive` parameter, the file path of a download URL, and
 * the error answer (413 for a file over the cap).
 */
import { badRequest, type Logger } from '../kernel/index.js';
import { FileTooLargeError, decodeUrlPath } from '../workspace/index.js';
import { errorReply, type Reply } from './http.js';

/** A boolean query parameter: absent, empty, false or 0 → false; true or 1 → true; else 400. */
export function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  if (v === null || v === '' || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw badRequest(`${name} must be a boolean`);
}

/**
 * The wildcard part of a raw (undecoded) URL: everything after its first `segments` path
 * segments (`/api/v1/sessions/<id>/files/` is 5, `/api/v1/memory/files/` is 4). Taken from
 * the raw URL because uWS hands out the path undecoded and the `*` has no parameter of its
 * own; it is decoded as a whole, so `%2F`, `%2e%2e` and `%5C` are checked like their literal
 * forms.
 */
export function wildcardPath(rawUrl: string, segments: number): string {
  const parts = rawUrl.split('/'); // ['', 'api', 'v1', ...]
  return decodeUrlPath(parts.slice(segments + 1).join('/'));
}

/** A file route's failure: 413 for a file over the cap (ResourceExhausted alone means 429 elsewhere), else the gateway's answer. */
export function fileErrorReply(err: unknown, log: Logger): Reply {
  return err instanceof FileTooLargeError ? { status: 413, body: { error: err.message } } : errorReply(err, log);
}
