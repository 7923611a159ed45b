/**
 * What the OpenAI-compatible layer's tests share: an `openai` client on a test app, a raw SSE
 * reader where the exact bytes matter, the task behind a completion, and the check of an
 * OpenAI-shaped error.
 */
import OpenAI, { APIError } from 'openai';
import { expect } from 'vitest';
import { json, parseSse, waitFor } from './app.js';

/** The event types the stream forwards as service_events (spec, "Events", 5). */
export const FORWARDED = new Set([
  'WORKFLOW_STARTED',
  'WORKFLOW_PAUSING',
  'WORKFLOW_PAUSED',
  'WORKFLOW_RESUMED',
  'WORKFLOW_CANCELLING',
  'WORKFLOW_CANCELLED',
  'AGENT_STARTED',
  'AGENT_COMPLETED',
  'AGENT_THINKING',
  'TOOL_INVOKED',
  'TOOL_OBSERVATION',
  'PROGRESS',
  'DATA_PROCESSING',
  'WAITING',
  'ERROR_RECOVERY',
  'TEAM_RECRUITED',
  'TEAM_RETIRED',
  'TEAM_STATUS',
  'ROLE_ASSIGNED',
  'DELEGATION',
  'DEPENDENCY_SATISFIED',
  'BUDGET_THRESHOLD',
  'APPROVAL_REQUESTED',
  'APPROVAL_DECISION',
]);

export const client = (base: string, apiKey = 'sk-anything') => new OpenAI({ baseURL: `${base}/v1`, apiKey, maxRetries: 0, timeout: 20_000 });

export interface RawStream {
  status: number;
  headers: Headers;
  chunks: any[];
  /** Every `data:` payload in order, `[DONE]` included. */
  data: string[];
  comments: number;
}

/** POSTs and reads the whole SSE body; every `data:` line parsed. */
export async function rawStream(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<RawStream> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  let comments = 0;
  const data = parseSse(await res.text(), () => comments++).map((f) => f.data);
  return { status: res.status, headers: res.headers, data, chunks: data.filter((x) => x !== '[DONE]').map((x) => JSON.parse(x)), comments };
}

export const contentOf = (chunks: any[]) => chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');

export async function taskOf(base: string, id: string, headers: Record<string, string> = {}): Promise<any> {
  return json(await fetch(`${base}/api/v1/tasks/${id}`, { headers }));
}

export async function statusEventually(base: string, id: string, status: string, headers: Record<string, string> = {}): Promise<any> {
  return waitFor(
    async () => {
      const t = await taskOf(base, id, headers);
      return t.status === status ? t : undefined;
    },
    15_000,
    50,
  );
}

/** Expects the call to fail with an OpenAI APIError of this status, type, code (and param). */
export async function expectApiError(p: Promise<unknown>, status: number, type: string, code: string, param?: string | null): Promise<APIError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected the request to fail').toBeInstanceOf(APIError);
  const e = err as APIError;
  expect(e.status).toBe(status);
  expect(e.type).toBe(type);
  expect(e.code).toBe(code);
  if (param !== undefined) expect(e.param).toBe(param);
  expect(typeof (e.error as { message?: unknown }).message).toBe('string');
  return e;
}
