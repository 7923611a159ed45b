/**
 * Hash routing: `#/new`, `#/tasks`, `#/tasks/<id>` (detail), `#/live/<id>` (live view),
 * `#/tasks/<id>/review` (plan review), `#/approvals`, `#/sign-in`. `useRoute` re-renders on every hash change.
 */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'new' }
  | { page: 'tasks' }
  | { page: 'detail'; id: string }
  | { page: 'live'; id: string }
  | { page: 'review'; id: string }
  | { page: 'approvals' }
  | { page: 'sign-in' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'tasks' && parts[1] && parts[2] === 'review') return { page: 'review', id: parts[1] };
  if (parts[0] === 'tasks' && parts[1]) return { page: 'detail', id: parts[1] };
  if (parts[0] === 'live' && parts[1]) return { page: 'live', id: parts[1] };
  if (parts[0] === 'tasks') return { page: 'tasks' };
  if (parts[0] === 'approvals') return { page: 'approvals' };
  if (parts[0] === 'sign-in') return { page: 'sign-in' };
  return { page: 'new' };
}

export const href = {
  new: '#/new',
  tasks: '#/tasks',
  detail: (id: string) => `#/tasks/${encodeURIComponent(id)}`,
  live: (id: string) => `#/live/${encodeURIComponent(id)}`,
  review: (id: string) => `#/tasks/${encodeURIComponent(id)}/review`,
  approvals: '#/approvals',
  signIn: '#/sign-in',
};

export function go(to: string): void {
  location.hash = to;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
