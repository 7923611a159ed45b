import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ PARTIAL_CHUNK_CHARS: '40' });
});
afterAll(async () => {
  await t?.stop();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(t.base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

async function waitDone(id: string) {
  return waitFor(async () => {
    const s = await json(await fetch(`${t.base}/api/v1/tasks/${id}`));
    return ['TASK_STATUS_COMPLETED', 'TASK_STATUS_FAILED'].includes(s.status) ? s : undefined;
  });
}

describe('POST /api/v1/tasks', () => {
  it('accepts a task and returns the submission response with headers', async () => {
    const res = await post('/api/v1/tasks', { query: 'What is the capital of France?' });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ status: 'STATUS_CODE_OK' });
    expect(body.task_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(body.created_at).toString()).not.toBe('Invalid Date');
    expect(res.headers.get('x-workflow-id')).toBe(body.task_id);
    expect(res.headers.get('x-session-id')).toBeTruthy();
  });

  it('keeps a supplied session id', async () => {
    const res = await post('/api/v1/tasks', { query: 'hello', session_id: 'my-chat-1' });
    expect(res.headers.get('x-session-id')).toBe('my-chat-1');
    const s = await waitDone((await json(res)).task_id);
    expect(s.session_id).toBe('my-chat-1');
  });

  it('rejects a missing query, invalid JSON, bad types and disable_ai with a model control', async () => {
    for (const [body, re] of [
      [{}, /query is required/],
      ['{"query":', /invalid JSON/],
      [{ query: 5 }, /query/],
      [{ query: '' }, /query/],
      [{ query: 'x', mode: 'turbo' }, /mode must be one of/],
      [{ query: 'x', model_tier: 'huge' }, /model_tier/],
      [{ query: 'x', context: { disable_ai: true }, model_tier: 'large' }, /disable_ai/],
      [{ query: 'x', context: { disable_ai: true, model_override: 'gpt-x' } }, /disable_ai/],
      [{ query: 'x', context: { disable_ai: true }, provider_override: 'openai' }, /disable_ai/],
      [[1, 2], /body/],
    ] as const) {
      const res = await post('/api/v1/tasks', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const b = await json(res);
      expect(Object.keys(b)).toEqual(['error']);
      expect(b.error).toMatch(re);
    }
  });

  it('accepts the "off" values of flags (they ask for nothing)', async () => {
    // Their "off" values ask for nothing and are accepted.
    for (const fields of [{ enable_verification: false }, { context: { disable_ai: false } }, { skill: '' }, { context: { force_swarm: false } }]) {
      const res = await post('/api/v1/tasks', { query: 'accepted', ...fields });
      expect(res.status, JSON.stringify(fields)).toBe(200);
    }
  });

  it('model_override and provider_override are checked against the catalogue at submission (400), and the task runs on the choice', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ model_override: 'no-such-model' }, 'unknown model: no-such-model'],
      [{ provider_override: 'nowhere' }, 'unknown provider: nowhere'],
      [{ context: { provider_override: 'nowhere' } }, 'unknown provider: nowhere'],
      [{ provider_override: 'openai' }, 'provider openai has no API key configured (set OPENAI_API_KEY)'],
    ];
    for (const [fields, msg] of cases) {
      const res = await post('/api/v1/tasks', { query: 'x', ...fields });
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect((await json(res)).error).toBe(msg);
    }
    const { task_id } = await json(await post('/api/v1/tasks', { query: 'on the offline provider', mode: 'simple', provider_override: 'offline' }));
    const s = await waitDone(task_id);
    expect(s).toMatchObject({ status: 'TASK_STATUS_COMPLETED', provider: 'offline', model_used: 'offline-deterministic' });
  });

  it('refuses an unknown role, a role this edition cannot run, and max_iterations out of 1-50, with 400', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ context: { role: 'wizard' } }, 'unknown role: wizard; known: generalist, analysis, research, writer, critic, developer'],
      [{ context: { role: 'ads_research' } }, 'role ads_research is available in the hosted edition only'],
      [{ context: { role: 'browser_use' } }, 'role browser_use needs browser tools, which this edition does not have'],
      [{ context: { role: 7 } }, 'context.role must be a string'],
      [{ max_iterations: 51 }, 'max_iterations'],
      [{ max_iterations: 0 }, 'max_iterations'],
    ];
    for (const [fields, msg] of cases) {
      const res = await post('/api/v1/tasks', { query: 'x', ...fields });
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect((await json(res)).error).toContain(msg);
    }
    for (const role of ['generalist', 'analysis', 'research', 'writer', 'critic', 'developer']) {
      expect((await post('/api/v1/tasks', { query: 'x', mode: 'simple', context: { role } })).status, role).toBe(200);
    }
  });

  it('refuses prototype member names as model_tier (top level and context fallback) with 400', async () => {
    for (const tier of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      for (const body of [
        { query: 'x', model_tier: tier },
        { query: 'x', context: { model_tier: tier } },
      ]) {
        const res = await post('/api/v1/tasks', body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect((await json(res)).error).toMatch(/model_tier must be one of: small, medium, large/);
      }
    }
    // The context fallback works for a real tier, and a non-string one is refused.
    expect((await post('/api/v1/tasks', { query: 'x', context: { model_tier: 'large' } })).status).toBe(200);
    expect((await json(await post('/api/v1/tasks', { query: 'x', context: { model_tier: 5 } }))).error).toBe('context.model_tier must be a string');
  });

  it('returns the cached response for a repeated Idempotency-Key and ignores the new body', async () => {
    const key = randomUUID();
    const a = await post('/api/v1/tasks', { query: 'first body' }, { 'Idempotency-Key': key });
    const b = await post('/api/v1/tasks', { query: 'second body' }, { 'Idempotency-Key': key });
    const [ja, jb] = [await json(a), await json(b)];
    expect(jb).toEqual(ja);
    expect(b.headers.get('x-workflow-id')).toBe(ja.task_id);
    const s = await waitDone(ja.task_id);
    expect(s.query).toBe('first body');
    const c = await json(await post('/api/v1/tasks', { query: 'first body' }, { 'Idempotency-Key': randomUUID() }));
    expect(c.task_id).not.toBe(ja.task_id);
  });

  it('gives concurrent requests with one Idempotency-Key the same task', async () => {
    const key = randomUUID();
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => post('/api/v1/tasks', { query: `concurrent ${i}` }, { 'Idempotency-Key': key })));
    const bodies = await Promise.all(replies.map(json));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(new Set(bodies.map((b) => b.task_id)).size).toBe(1);
  });

  it('does not cache a rejected request under its Idempotency-Key', async () => {
    const key = randomUUID();
    expect((await post('/api/v1/tasks', { nope: 1 }, { 'Idempotency-Key': key })).status).toBe(400);
    const ok = await post('/api/v1/tasks', { query: 'now valid' }, { 'Idempotency-Key': key });
    expect(ok.status).toBe(200);
  });

  it('rejects a non-JSON content type and an oversized body', async () => {
    const r1 = await fetch(`${t.base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"query":"x"}' });
    expect(r1.status).toBe(400);
    expect((await json(r1)).error).toMatch(/Content-Type/);
    const r2 = await post('/api/v1/tasks', { query: 'x'.repeat(1_100_000) });
    expect(r2.status).toBe(413);
    expect((await json(r2)).error).toBeTruthy();
  });

  it('answers unknown routes with a JSON 404', async () => {
    const r = await fetch(`${t.base}/api/v1/nope`);
    expect(r.status).toBe(404);
    expect((await json(r)).error).toBeTruthy();
  });

  it('accepts traceparent and carries the trace id into events', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await post('/api/v1/tasks', { query: 'trace me' }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    const { task_id } = await json(res);
    const { events } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${task_id}`);
    const started = JSON.parse(events.find((e) => e.event === 'WORKFLOW_STARTED')!.data);
    expect(started.payload.trace_id).toBe(traceId);
  });
});

describe('task lifecycle', () => {
  it('runs a simple task to completion with the full status object', async () => {
    const { task_id } = await json(await post('/api/v1/tasks', { query: 'Say hi', mode: 'simple' }));
    const s = await waitDone(task_id);
    expect(s).toMatchObject({
      task_id,
      status: 'TASK_STATUS_COMPLETED',
      query: 'Say hi',
      mode: 'EXECUTION_MODE_SIMPLE',
      model_used: 'offline-deterministic',
      provider: 'offline',
      error: '',
    });
    expect(s.result).toContain('[offline provider');
    expect(s.usage.total_tokens).toBeGreaterThan(0);
    expect(s.usage.total_tokens).toBe(s.usage.input_tokens + s.usage.output_tokens);
    expect(s.metadata.model_breakdown[0]).toMatchObject({ model: 'offline-deterministic', provider: 'offline', executions: 1 });
    expect(s.response).toBeUndefined();
  });

  it('parses a JSON result into response', async () => {
    const { task_id } = await json(
      await post('/api/v1/tasks', { query: 'list', mode: 'simple', context: { system_prompt: 'Respond with a JSON array of subtasks' } }),
    );
    const s = await waitDone(task_id);
    expect(Array.isArray(s.response)).toBe(true);
  });

  it('404s an unknown task with the error body', async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await fetch(`${t.base}/api/v1/tasks/${id}`);
      expect(res.status).toBe(404);
      expect(await json(res)).toEqual({ error: 'Task not found' });
    }
  });

  it('streams the events of a simple task in order, with delta chunks of PARTIAL_CHUNK_CHARS', async () => {
    const { task_id } = await json(await post('/api/v1/tasks', { query: 'Stream this answer please', mode: 'simple' }));
    const { status, events, headers } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${task_id}`);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('text/event-stream');
    const typed = events.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data));
    expect(typed.map((e) => e.seq)).toEqual(typed.map((_, i) => i + 1));
    const types = typed.map((e) => e.type);
    expect(types[0]).toBe('WORKFLOW_STARTED');
    expect(types).toContain('AGENT_STARTED');
    expect(types).toContain('LLM_OUTPUT');
    expect(types.slice(-3)).toEqual(['AGENT_COMPLETED', 'WORKFLOW_COMPLETED', 'STREAM_END']);
    expect(types.indexOf('AGENT_COMPLETED')).toBeLessThan(types.indexOf('WORKFLOW_COMPLETED'));
    expect(types.at(-1)).toBe('STREAM_END');
    const deltas = events.filter((e) => e.event === 'thread.message.delta').map((e) => JSON.parse(e.data));
    expect(deltas.length).toBeGreaterThan(1);
    for (const d of deltas.slice(0, -1)) expect(d.message.length).toBe(40);
    const completed = events.find((e) => e.event === 'thread.message.completed')!;
    expect(JSON.parse(completed.data).message).toBe(deltas.map((d) => d.message).join(''));
    for (const e of events.filter((e) => e.event !== 'done')) {
      const d = JSON.parse(e.data);
      expect(e.id).toBe(`${Date.parse(d.timestamp)}-${d.seq}`);
      expect(d).toHaveProperty('agent_id');
      expect(d).toHaveProperty('message');
    }
    expect(events.at(-1)).toEqual({ event: 'done', data: '[DONE]' });
  });

  it('persists the event history', async () => {
    const { task_id } = await json(await post('/api/v1/tasks', { query: 'history please', mode: 'standard' }));
    await waitDone(task_id);
    const h = await waitFor(async () => {
      const b = await json(await fetch(`${t.base}/api/v1/tasks/${task_id}/events`));
      return b.events.at(-1)?.type === 'STREAM_END' ? b : undefined;
    });
    expect(h.events.map((e: { seq: number }) => e.seq)).toEqual(h.events.map((_: unknown, i: number) => i + 1));
    expect(h.events[0].payload.mode).toBe('standard');
    expect(h.count).toBe(h.events.length);
  });
});

describe('GET /api/v1/tasks', () => {
  it('lists newest first with total_count, pagination, session and status filters', async () => {
    const session = `list-${randomUUID()}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await json(await post('/api/v1/tasks', { query: `q${i}`, session_id: session, mode: 'simple' }))).task_id);
    for (const id of ids) await waitDone(id);
    const all = await json(await fetch(`${t.base}/api/v1/tasks?session_id=${session}`));
    expect(all.total_count).toBe(3);
    expect(all.tasks.map((x: { task_id: string }) => x.task_id)).toEqual([...ids].reverse());
    expect(all.tasks[0]).toMatchObject({ query: 'q2', status: 'TASK_STATUS_COMPLETED', mode: 'EXECUTION_MODE_SIMPLE' });
    expect(all.tasks[0].completed_at).toBeTruthy();
    expect(all.tasks[0].total_token_usage).toMatchObject({ cost_usd: 0 });
    expect(all.tasks[0].total_token_usage.total_tokens).toBeGreaterThan(0);
    const page = await json(await fetch(`${t.base}/api/v1/tasks?session_id=${session}&limit=1&offset=1`));
    expect(page.total_count).toBe(3);
    expect(page.tasks.map((x: { task_id: string }) => x.task_id)).toEqual([ids[1]]);
    const past = await json(await fetch(`${t.base}/api/v1/tasks?session_id=${session}&limit=1&offset=10`));
    expect(past).toEqual({ tasks: [], total_count: 3 });
    const done = await json(await fetch(`${t.base}/api/v1/tasks?session_id=${session}&status=COMPLETED`));
    expect(done.total_count).toBe(3);
    for (const st of ['CANCELLED', 'CANCELED', 'FAILED', 'QUEUED']) {
      const r = await json(await fetch(`${t.base}/api/v1/tasks?session_id=${session}&status=${st}`));
      expect(r.total_count).toBe(0);
    }
  });

  it('rejects out-of-range limit and offset and unknown status', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'offset=-1', 'status=DONE']) {
      const res = await fetch(`${t.base}/api/v1/tasks?${q}`);
      expect(res.status, q).toBe(400);
      expect((await json(res)).error).toBeTruthy();
    }
    expect((await fetch(`${t.base}/api/v1/tasks?limit=100`)).status).toBe(200);
  });
});

describe('context values as existing clients send them', () => {
  const stored = async (id: string) => (await t.app.store.sql`SELECT context, options FROM tasks WHERE id = ${id}::uuid`)[0];

  it('accepts flags and numbers as strings on both submit routes and stores them as booleans and numbers', async () => {
    // The reference platform's SDK sends {"force_research": "true"} in its own end-to-end script.
    for (const path of ['/api/v1/tasks', '/api/v1/tasks/stream']) {
      const res = await post(path, {
        query: 'Write a short essay about the history of computing.',
        context: {
          force_research: 'true',
          iterative_research_enabled: ' FALSE ',
          enable_fact_extraction: '1',
          iterative_max_iterations: '2',
          history_window_size: '20',
        },
      });
      expect(res.status, path).toBe(path.endsWith('stream') ? 201 : 200);
      const row = await stored((await json(res)).task_id);
      expect(row.context, path).toEqual({
        force_research: true,
        iterative_research_enabled: false,
        enable_fact_extraction: true,
        iterative_max_iterations: 2,
        history_window_size: 20,
      });
      expect(row.options.research, path).toEqual({ strategy: 'standard', maxIterations: 2, iterative: false, factExtraction: true });
    }
    // "false" turns a flag off: no research workflow, the swarm flag asks for nothing.
    const off = await post('/api/v1/tasks', { query: 'hello', mode: 'simple', context: { force_research: 'false', force_swarm: '0', disable_ai: 'False' } });
    expect(off.status).toBe(200);
    const row = await stored((await json(off)).task_id);
    expect(row.context).toEqual({ force_research: false, force_swarm: false, disable_ai: false });
    expect(row.options.research).toBeUndefined();
  });

  it('refuses any other value with 400 naming the key', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ force_research: 'yes' }, 'context.force_research must be a boolean'],
      [{ force_research: 1 }, 'context.force_research must be a boolean'],
      [{ disable_ai: 'on' }, 'context.disable_ai must be a boolean'],
      [{ force_swarm: 'maybe' }, 'context.force_swarm must be a boolean'],
      [{ force_research: 'true', iterative_max_iterations: '6' }, 'context.iterative_max_iterations must be an integer from 1 to 5'],
      [{ force_research: 'true', iterative_max_iterations: '2.5' }, 'context.iterative_max_iterations must be an integer from 1 to 5'],
      [{ history_window_size: 'ten' }, 'context.history_window_size must be an integer from 1 to 1000'],
      [{ recents_count: -1 }, 'context.recents_count must be an integer from 0 to 1000'],
      [{ compression_trigger_ratio: '0' }, 'context.compression_trigger_ratio must be a number greater than 0 and at most 1'],
      [{ compression_target_ratio: 'half' }, 'context.compression_target_ratio must be a number greater than 0 and at most 1'],
    ];
    for (const [context, msg] of cases) {
      for (const path of ['/api/v1/tasks', '/api/v1/tasks/stream']) {
        const res = await post(path, { query: 'x', context });
        expect(res.status, `${path} ${JSON.stringify(context)}`).toBe(400);
        expect(await json(res), `${path} ${JSON.stringify(context)}`).toEqual({ error: msg });
      }
    }
  });
});

describe('POST /api/v1/tasks/stream', () => {
  it('returns 201 with the stream url, which streams the task', async () => {
    const res = await post('/api/v1/tasks/stream', { query: 'stream me' });
    expect(res.status).toBe(201);
    const b = await json(res);
    expect(b.workflow_id).toBe(b.task_id);
    expect(b.stream_url).toBe(`/api/v1/stream/sse?workflow_id=${b.workflow_id}`);
    expect(res.headers.get('x-workflow-id')).toBe(b.workflow_id);
    const { events } = await readSse(t.base + b.stream_url);
    expect(events.at(-1)).toEqual({ event: 'done', data: '[DONE]' });
  });
});

describe('malformed URLs', () => {
  it('answers a bad percent-escape in a path parameter with a JSON 4xx, and keeps serving', async () => {
    const r = await fetch(`${t.base}/api/v1/tasks/%E0%A4%A`);
    expect(r.status).toBe(404);
    expect((await json(r)).error).toBe('Task not found');
    expect((await fetch(`${t.base}/health`)).status).toBe(200);
  });
});
