/** /api/v1/schedules: filled in by the schedules work. */
import type { TemplatedApp } from 'uWebSockets.js';
import type { RouteDeps } from './route-deps.js';

export function registerScheduleRoutes(_app: TemplatedApp, _deps: RouteDeps): void {}
