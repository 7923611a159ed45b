/**
 * Plain API calls of the tests that drive a task from outside (the CLI's and the console's):
 * a request answering `{status, body}` (the typed client's transport, with the caller's
 * headers), a submission, a task's status, its end, and its pending approval. `conn` is read
 * at each call, so the helpers can be made before the test app starts.
 */
import { expect } from 'vitest';
import { createFetch } from '../../src/client/index.js';
import { json, waitFor } from './app.js';

export function taskApi(conn: () => { base: string; headers: Record<string, string> }) {
  const api = async (method: string, path: string, body?: unknown) => {
    const { base, headers } = conn();
    const r = await createFetch({ baseUrl: base })(path, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: await json(r) };
  };
  const submit = async (body: Record<string, unknown>): Promise<string> => {
    const r = await api('POST', '/api/v1/tasks', body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.task_id;
  };
  const statusOf = async (id: string) => (await api('GET', `/api/v1/tasks/${id}`)).body.status as string;
  /** The task's terminal status, once it has one. */
  const ended = (id: string) =>
    waitFor(
      async () => {
        const s = await statusOf(id);
        return /COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(s) ? s : undefined;
      },
      30_000,
      100,
    );
  /** The task's pending approval once it waits for it. */
  const pendingOf = (id: string) =>
    waitFor(
      async () => {
        const b = (await api('GET', '/api/v1/approvals?status=pending')).body;
        const a = (b.approvals as { approval_id: string; workflow_id: string }[]).find((x) => x.workflow_id === id);
        return a && (await statusOf(id)) === 'TASK_STATUS_PAUSED' ? a : undefined;
      },
      20_000,
      100,
    );
  return { api, submit, statusOf, ended, pendingOf };
}
