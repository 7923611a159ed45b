/**
 * GET /metrics: the process's Prometheus metrics in the text format, without authentication
 * like /health (scrapers reach it on the private network; it carries no task, user or tenant
 * id). The same text as the health ports' /metrics. `metricsPaths` is its OpenAPI path item,
 * for openapi.ts to spread into its `paths`.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import type { Logger } from '../kernel/index.js';
import { scrape } from '../metrics/index.js';
import { route, type CorsPolicy } from './http.js';

export function registerMetricsRoute(app: TemplatedApp, ctx: { cors: CorsPolicy; log: Logger }): void {
  route(
    app,
    'get',
    '/metrics',
    async () => {
      const { contentType, text } = await scrape();
      return { status: 200, raw: text, headers: { 'Content-Type': contentType } };
    },
    ctx,
  );
}

export const metricsPaths = {
  '/metrics': {
    get: {
      summary: 'Prometheus metrics of this process (text format 0.0.4); no authentication, like /health. Names and labels: README, "Metrics"',
      operationId: 'metrics',
      responses: { 200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } } },
    },
  },
};
