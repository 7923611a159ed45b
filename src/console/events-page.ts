/** A task's stored events, a page at a time (GET /api/v1/tasks/{id}/events): the detail page's raw events and the swarm view. */
import { ok } from '../client/index.js';
import { call } from './session.js';

/** Events one read takes (the API's largest page): a page this full may have more after it. */
export const EVENTS_PAGE = 1000;

/** The page of task `id`'s stored events after seq `afterSeq`. */
export function eventsAfter(id: string, afterSeq: number, signal?: AbortSignal) {
  return call(
    async (api) =>
      ok(await api.GET('/api/v1/tasks/{id}/events', { params: { path: { id }, query: { after_seq: afterSeq, limit: EVENTS_PAGE } }, signal })).events,
  );
}
