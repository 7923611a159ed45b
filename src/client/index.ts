/**
 * The typed TypeScript client of the public API: used by the CLI, the console and the tests.
 * Types generated from /openapi.json (schema.gen.ts, `npm run gen:client`), calls through
 * openapi-fetch, event streams followed with resume. Web APIs only, so it bundles for a browser.
 *
 *   const api = createClient({ baseUrl, apiKey });
 *   const task = ok(await api.GET('/api/v1/tasks/{id}', { params: { path: { id } } }));
 *   for await (const e of followStream({ baseUrl, apiKey, workflowId: id })) ...
 */
export { createClient, createFetch, authHeaders } from './client.js';
export type { ApiClient, ClientOptions, ConnectionOptions, FetchLike } from './client.js';
export { ok } from './result.js';
export type { DataOf, FetchResult } from './result.js';
export { ApiError, NetworkError, apiErrorOf, readApiError } from './errors.js';
export { followStream, reconnectDelayMs, DEFAULT_MAX_FAILURES } from './stream.js';
export type { FollowStreamOptions, StreamEvent } from './stream.js';
export type { components, operations, paths } from './schema.gen.js';
