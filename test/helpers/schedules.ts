/**
 * What the schedule tests share: an app with every role (the scheduler included; other test
 * files run without it), users, the schedules API (the typed client; `api` answers raw status
 * and body, for the tests of bad requests), and schedules made due in SQL.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { createClient, createFetch, ok, type components } from '../../src/client/index.js';
import { json, startTestApp, waitFor, type TestApp } from './app.js';

export const SCHEDULES_ENV = {
  GATEWAY_SKIP_AUTH: '0',
  PASSWORD_SCRYPT_N: '1024',
  JWT_SECRET: 'schedules-test-secret-0123456789abcdefghijklmnop',
  RATE_LIMIT_REQUESTS: '100000',
  SCHEDULE_MAX_PER_USER: '4',
  ROLES: 'all',
  LLM_SERVICE_PORT: '0',
  AGENT_GRPC_PORT: '0',
};

export interface User {
  key: string;
  id: string;
  tenantId: string;
}

export const valid = (over: Record<string, unknown> = {}) => ({
  name: 'Daily digest',
  cron_expression: '0 9 * * *',
  task_query: 'Summarise the news',
  ...over,
});

/**
 * Starts the app for the calling file (and, with `second`, another process with every role on
 * the same NATS) around its tests, and returns the helpers bound to it.
 */
export function useSchedulesApp(opts: { second?: boolean } = {}) {
  const h = {
    a: undefined as unknown as TestApp,
    b: undefined as TestApp | undefined,
  };
  beforeAll(async () => {
    h.a = await startTestApp(SCHEDULES_ENV);
    if (opts.second) h.b = await startTestApp({ ...SCHEDULES_ENV }, { natsUrl: h.a.natsUrl });
  });
  afterAll(async () => {
    await h.b?.stop();
    await h.a?.stop();
  });

  /** The typed client, as `u` when given. */
  const client = (u?: User) => createClient({ baseUrl: h.a.base, apiKey: u?.key });

  async function register(): Promise<User> {
    const r = await client().POST('/api/v1/auth/register', { body: { email: `sched-${randomUUID()}@example.com`, password: 'password123' } });
    expect(r.response.status, JSON.stringify(r.error)).toBe(201);
    const body = ok(r);
    return { key: body.api_key, id: body.user.id, tenantId: body.user.tenant_id };
  }

  /** Any call, as `u` (or unauthenticated), with its raw status and JSON body; a string body is sent as it is. */
  async function api(u: User | undefined, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    const send = createFetch({ baseUrl: h.a.base, apiKey: u?.key });
    const r = await send(path, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: r.status, body: await json(r) };
  }

  async function createSchedule(u: User, over: Record<string, unknown> = {}): Promise<string> {
    const r = await client(u).POST('/api/v1/schedules', { body: valid(over) as components['schemas']['ScheduleCreate'] });
    expect(r.response.status, JSON.stringify(r.error)).toBe(200);
    return ok(r).schedule_id;
  }

  /** Makes a schedule due by moving next_run_at into the past; returns the exact value set. */
  async function makeDue(id: string, agoSql = '1 minute'): Promise<Date> {
    const [row] = await h.a.app.store
      .sql`UPDATE schedules SET next_run_at = date_trunc('milliseconds', now() - ${agoSql}::interval) WHERE id = ${id} RETURNING next_run_at`;
    return row.next_run_at as Date;
  }

  const runsOf = (id: string) => h.a.app.store.sql`SELECT * FROM schedule_runs WHERE schedule_id = ${id} ORDER BY triggered_at`;

  async function waitRunsDone(u: User, id: string, n = 1, timeoutMs = 20_000) {
    return waitFor(
      async () => {
        const runs = ok(await client(u).GET('/api/v1/schedules/{id}/runs', { params: { path: { id } } })).runs as any[];
        return runs.length >= n && runs.every((x) => !['PENDING', 'RUNNING'].includes(x.status)) ? runs : undefined;
      },
      timeoutMs,
      100,
    );
  }

  return Object.assign(h, { register, api, createSchedule, makeDue, runsOf, waitRunsDone });
}
