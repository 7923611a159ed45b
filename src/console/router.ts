/**
 * Hash routing: `#/new`, `#/tasks`, `#/tasks/<id>` (detail), `#/live/<id>` (live view),
 * `#/tasks/<id>/review` (plan review), `#/swarm/<id>` (a swarm task), `#/approvals`,
 * `#/agents` and `#/agents/<id>`, `#/tools` and `#/tools/<name>`, `#/sessions` and
 * `#/sessions/<id>`, `#/schedules` and `#/schedules/<id>`, `#/channels`, `#/sign-in`.
 * `useRoute` re-renders on every hash change.
 */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'new' }
  | { page: 'tasks' }
  | { page: 'detail'; id: string }
  | { page: 'live'; id: string }
  | { page: 'review'; id: string }
  | { page: 'swarm'; id: string }
  | { page: 'approvals' }
  | { page: 'agents'; id?: string }
  | { page: 'tools'; name?: string }
  | { page: 'sessions'; id?: string }
  | { page: 'schedules'; id?: string }
  | { page: 'channels' }
  | { page: 'sign-in' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  const [first, second, third] = parts;
  if (first === 'tasks' && second && third === 'review') return { page: 'review', id: second };
  if (first === 'tasks' && second) return { page: 'detail', id: second };
  if (first === 'live' && second) return { page: 'live', id: second };
  if (first === 'swarm' && second) return { page: 'swarm', id: second };
  if (first === 'tasks') return { page: 'tasks' };
  if (first === 'approvals') return { page: 'approvals' };
  if (first === 'agents') return second ? { page: 'agents', id: second } : { page: 'agents' };
  if (first === 'tools') return second ? { page: 'tools', name: second } : { page: 'tools' };
  if (first === 'sessions') return second ? { page: 'sessions', id: second } : { page: 'sessions' };
  if (first === 'schedules') return second ? { page: 'schedules', id: second } : { page: 'schedules' };
  if (first === 'channels') return { page: 'channels' };
  if (first === 'sign-in') return { page: 'sign-in' };
  return { page: 'new' };
}

const part = (s: string) => encodeURIComponent(s);

export const href = {
  new: '#/new',
  tasks: '#/tasks',
  detail: (id: string) => `#/tasks/${part(id)}`,
  live: (id: string) => `#/live/${part(id)}`,
  review: (id: string) => `#/tasks/${part(id)}/review`,
  swarm: (id: string) => `#/swarm/${part(id)}`,
  approvals: '#/approvals',
  agents: '#/agents',
  agent: (id: string) => `#/agents/${part(id)}`,
  tools: '#/tools',
  tool: (name: string) => `#/tools/${part(name)}`,
  sessions: '#/sessions',
  session: (id: string) => `#/sessions/${part(id)}`,
  schedules: '#/schedules',
  schedule: (id: string) => `#/schedules/${part(id)}`,
  channels: '#/channels',
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
