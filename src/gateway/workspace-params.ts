/**
 * The query and path parameters of the file routes, shared by the session workspace
 * (workspace-routes.ts) and the user's memory (memory-routes.ts): `recursive`, and the file
 * path of a download URL.
 */
import { badRequest } from '../kernel/index.js';
import { decodeUrlPath } from '../workspace/index.js';

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
