/** /api/v1/sessions/{id}/files: filled in by the workspace work. */
import type { TemplatedApp } from 'uWebSockets.js';
import type { RouteDeps } from './route-deps.js';

export function registerWorkspaceRoutes(_app: TemplatedApp, _deps: RouteDeps): void {}
