/**
 * The app the fuzz tests hit, with authentication on, and fixtures (a user key, a completed
 * task and its session, a schedule, a second API key) so that requests reach deep code.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { json, startTestApp, waitFor, type TestApp } from './app.js';

export function useFuzzApp() {
  const h = {
    t: undefined as unknown as TestApp,
    port: 0,
    auth: {} as Record<string, string>,
    fx: { task: '', session: '', schedule: '', apiKey: '' },
  };
  beforeAll(async () => {
    const t = (h.t = await startTestApp({
      GATEWAY_SKIP_AUTH: '0',
      JWT_SECRET: 'fuzz-test-secret-0123456789-abcdefghijklmnopqrstuvwxyz',
      PASSWORD_SCRYPT_N: '1024',
      RATE_LIMIT_REQUESTS: '1000000',
      RATE_LIMIT_TASK_LIST_BURST: '1000000',
    }));
    h.port = Number(new URL(t.base).port);
    const post = (path: string, body: unknown, hd: Record<string, string> = {}) =>
      fetch(t.base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...hd }, body: JSON.stringify(body) });
    const reg = await json(await post('/api/v1/auth/register', { email: `fuzz-${randomUUID()}@example.com`, password: 'password123' }));
    // Not the default key: the fuzzed POST /auth/refresh-key replaces that one.
    const key = await json(await post('/api/v1/auth/api-keys', { name: 'fuzz' }, { 'X-API-Key': reg.api_key }));
    h.auth = { 'X-API-Key': key.api_key };
    h.fx.apiKey = (await json(await post('/api/v1/auth/api-keys', { name: 'fuzz-2' }, h.auth))).id;
    const task = await json(await post('/api/v1/tasks', { query: 'fuzz fixture', mode: 'simple' }, h.auth));
    h.fx.task = task.task_id;
    const done = await waitFor(async () => {
      const s = await json(await fetch(`${t.base}/api/v1/tasks/${h.fx.task}`, { headers: h.auth }));
      return s.status === 'TASK_STATUS_COMPLETED' ? s : undefined;
    }, 20_000);
    h.fx.session = done.session_id;
    const sched = await json(await post('/api/v1/schedules', { name: 'fuzz', cron_expression: '0 * * * *', timezone: 'UTC', task_query: 'fuzz' }, h.auth));
    h.fx.schedule = sched.schedule_id;
  });
  afterAll(async () => {
    await h.t?.stop();
  });
  return h;
}
