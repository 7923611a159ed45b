/** Sessions: endpoints, multi-turn history with window and compression, owner isolation. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, runTask, startTestApp, waitFor, type TestApp } from './helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    JWT_SECRET: 'sessions-test-secret-0123456789abcdefgh',
    RATE_LIMIT_REQUESTS: '100000',
  });
});
afterAll(async () => {
  await t?.stop();
});

async function user(): Promise<Record<string, string>> {
  const r = await fetch(`${t.base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `s-${randomUUID()}@example.com`, password: 'password123' }),
  });
  return { 'X-API-Key': (await json(r)).api_key };
}

const get = (path: string, h: Record<string, string>) => fetch(t.base + path, { headers: h });

describe('session endpoints', () => {
  it('creates a session with its first task and serves it by external id and by UUID', async () => {
    const h = await user();
    const ext = `chat-${randomUUID()}`;
    const first = await runTask(t.base, h, { query: 'first question', session_id: ext });
    await runTask(t.base, h, { query: 'second question', session_id: ext });
    // A client that named its session finds that name as session_id, the UUID as id.
    const byExt = await json(await get(`/api/v1/sessions/${ext}`, h));
    expect(byExt).toMatchObject({ session_id: ext, external_id: ext, title: '', task_count: 2 });
    expect(byExt.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(byExt.total_tokens).toBeGreaterThan(0);
    const byId = await json(await get(`/api/v1/sessions/${byExt.id}`, h));
    expect(byId).toMatchObject({ session_id: ext, id: byExt.id });
    for (const name of [ext, byExt.id]) {
      // The task list filters by either name of the session and reports the name the task gave.
      const tl = await json(await get(`/api/v1/tasks?session_id=${name}`, h));
      expect(tl.total_count, name).toBe(2);
      const hist = await json(await get(`/api/v1/sessions/${name}/history`, h));
      expect(hist.session_id, name).toBe(ext);
      expect((await json(await get(`/api/v1/sessions/${name}/events`, h))).session_id, name).toBe(ext);
    }
    expect((await json(await get(`/api/v1/tasks/${first.task_id}`, h))).session_id).toBe(ext);
    const list = await json(await get('/api/v1/sessions?limit=10', h));
    expect(list.total_count).toBe(1);
    expect(list.sessions[0]).toMatchObject({ session_id: ext, id: byExt.id, external_id: ext, task_count: 2 });
    // A UUID session id names the session itself.
    const sid = randomUUID();
    await runTask(t.base, h, { query: 'uuid session', session_id: sid });
    expect(await json(await get(`/api/v1/sessions/${sid}`, h))).toMatchObject({ session_id: sid, id: sid, external_id: null });
    const two = await json(await get('/api/v1/sessions?limit=1&offset=1', h));
    expect(two.total_count).toBe(2);
    expect(two.sessions).toHaveLength(1);
    expect((await get('/api/v1/sessions?limit=0', h)).status).toBe(400);
  });

  it('reports the name as the reference SDK reads it: list, details, rename, history and delete by that name', async () => {
    const h = await user();
    const name = `e2e-test-${Date.now()}`;
    const res = await fetch(`${t.base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...h },
      body: JSON.stringify({ query: 'Say hello', session_id: name }),
    });
    expect(res.headers.get('x-session-id')).toBe(name);
    const { task_id } = await json(res);
    await waitFor(async () => (await json(await get(`/api/v1/tasks/${task_id}`, h))).status === 'TASK_STATUS_COMPLETED');
    expect((await json(await get(`/api/v1/tasks/${task_id}`, h))).session_id).toBe(name);
    const { sessions } = await json(await get('/api/v1/sessions', h));
    expect(sessions.some((s: { session_id: string }) => s.session_id === name)).toBe(true);
    expect((await json(await get(`/api/v1/sessions/${name}`, h))).session_id).toBe(name);
    const patched = await fetch(`${t.base}/api/v1/sessions/${name}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...h },
      body: JSON.stringify({ title: 'E2E Test Session' }),
    });
    expect(await json(patched)).toMatchObject({ session_id: name, title: 'E2E Test Session' });
    expect((await json(await get(`/api/v1/sessions/${name}/history`, h))).tasks).toHaveLength(1);
    expect((await fetch(`${t.base}/api/v1/sessions/${name}`, { method: 'DELETE', headers: h })).status).toBe(204);
    expect((await get(`/api/v1/sessions/${name}`, h)).status).toBe(404);
  });

  it('returns the conversation history and the events grouped by turn', async () => {
    const h = await user();
    const ext = `hist-${randomUUID()}`;
    const a = await runTask(t.base, h, { query: 'one', session_id: ext });
    const b = await runTask(t.base, h, { query: 'two', session_id: ext });
    const hist = await json(await get(`/api/v1/sessions/${ext}/history`, h));
    expect(hist.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'one'],
      ['assistant', a.result],
      ['user', 'two'],
      ['assistant', b.result],
    ]);
    const ev = await waitFor(async () => {
      const e = await json(await get(`/api/v1/sessions/${ext}/events`, h));
      return e.turns.every((x: { events: { type: string }[] }) => x.events.at(-1)?.type === 'STREAM_END') ? e : undefined;
    });
    expect(ev.turns.map((x: { turn: number; task_id: string }) => [x.turn, x.task_id])).toEqual([
      [1, a.task_id],
      [2, b.task_id],
    ]);
    expect(ev.turns[0].events[0].type).toBe('WORKFLOW_STARTED');
  });

  it('updates the title, soft-deletes idempotently and validates', async () => {
    const h = await user();
    const ext = `t-${randomUUID()}`;
    await runTask(t.base, h, { query: 'x', session_id: ext });
    const patch = (body: unknown) =>
      fetch(`${t.base}/api/v1/sessions/${ext}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...h }, body: JSON.stringify(body) });
    const ok = await patch({ title: 'Trip planning' });
    expect(ok.status).toBe(200);
    expect((await json(ok)).title).toBe('Trip planning');
    expect((await patch({})).status).toBe(400);
    expect((await patch({ title: 'x'.repeat(256) })).status).toBe(400);
    expect((await json(await get(`/api/v1/sessions/${ext}`, h))).title).toBe('Trip planning');
    const del = () => fetch(`${t.base}/api/v1/sessions/${ext}`, { method: 'DELETE', headers: h });
    expect((await del()).status).toBe(204);
    expect((await del()).status).toBe(204);
    expect((await get(`/api/v1/sessions/${ext}`, h)).status).toBe(404);
    expect((await json(await get('/api/v1/sessions', h))).total_count).toBe(0);
    expect((await fetch(`${t.base}/api/v1/sessions/${randomUUID()}`, { method: 'DELETE', headers: h })).status).toBe(204);
  });

  it("never shows another user's session", async () => {
    const a = await user();
    const b = await user();
    const ext = `private-${randomUUID()}`;
    await runTask(t.base, a, { query: 'secret', session_id: ext });
    const sid = (await json(await get(`/api/v1/sessions/${ext}`, a))).id;
    for (const path of [`/api/v1/sessions/${ext}`, `/api/v1/sessions/${sid}`, `/api/v1/sessions/${sid}/history`, `/api/v1/sessions/${sid}/events`]) {
      expect((await get(path, b)).status, path).toBe(404);
    }
    expect((await json(await get('/api/v1/sessions', b))).total_count).toBe(0);
    const patch = await fetch(`${t.base}/api/v1/sessions/${sid}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...b },
      body: '{"title":"mine now"}',
    });
    expect(patch.status).toBe(404);
    await fetch(`${t.base}/api/v1/sessions/${sid}`, { method: 'DELETE', headers: b });
    expect((await get(`/api/v1/sessions/${sid}`, a)).status).toBe(200);
    // The same external id is a different session for b.
    await runTask(t.base, b, { query: 'b own', session_id: ext });
    const bs = await json(await get(`/api/v1/sessions/${ext}`, b));
    expect(bs.id).not.toBe(sid);
    expect(bs.task_count).toBe(1);
  });
});

describe('multi-turn history', () => {
  it('gives a task the earlier turns of its session', async () => {
    const h = await user();
    const ext = `mt-${randomUUID()}`;
    await runTask(t.base, h, { query: 'remember 42', session_id: ext });
    const second = await runTask(t.base, h, { query: 'what did I say?', session_id: ext });
    expect(second.metadata.history).toMatchObject({ total: 2, kept: 2 });
    const alone = await runTask(t.base, h, { query: 'what did I say?', session_id: `other-${randomUUID()}` });
    expect(alone.metadata.history).toMatchObject({ total: 0, kept: 0 });
    // The history changes the model input, so the deterministic answer differs.
    expect(second.result).not.toBe(alone.result);
  });

  it('keeps everything below the trigger and compresses once the window overflows at ratio 1', async () => {
    const h = await user();
    const ext = `win-${randomUUID()}`;
    const ctx = { history_window_size: 4, primers_count: 1, recents_count: 2, compression_trigger_ratio: 1 };
    await runTask(t.base, h, { query: 'turn 0', session_id: ext, context: ctx });
    await runTask(t.base, h, { query: 'turn 1', session_id: ext, context: ctx });
    const third = await runTask(t.base, h, { query: 'turn 2', session_id: ext, context: ctx });
    expect(third.metadata.history).toMatchObject({ total: 4, kept: 4, window: 4 });
    expect(third.metadata.history.compressed).toBeUndefined();
    const fourth = await runTask(t.base, h, { query: 'turn 3', session_id: ext, context: ctx });
    expect(fourth.metadata.history).toMatchObject({ total: 6, kept: 4, compressed: 3 });
  });

  it('applies a use_case_preset window', async () => {
    const h = await user();
    const r = await runTask(t.base, h, { query: 'preset', session_id: `p-${randomUUID()}`, context: { use_case_preset: 'short' } });
    expect(r.metadata.history).toMatchObject({ window: 10, preset: 'short' });
    const d = await runTask(t.base, h, { query: 'preset', session_id: `p-${randomUUID()}` });
    expect(d.metadata.history).toMatchObject({ window: 50, preset: 'default' });
  });

  it('compresses the middle with an LLM summary past the trigger ratio and records it', async () => {
    const h = await user();
    const ext = `cmp-${randomUUID()}`;
    // The settings as clients that send strings give them (read like numbers).
    const ctx = { history_window_size: '6', primers_count: ' 1 ', recents_count: '2', compression_trigger_ratio: '0.5', compression_target_ratio: '.5' };
    for (let i = 0; i < 3; i++) await runTask(t.base, h, { query: `turn ${i}`, session_id: ext, context: ctx });
    const last = await runTask(t.base, h, { query: 'turn 3', session_id: ext, context: ctx });
    expect(last.metadata.history).toMatchObject({ total: 6, window: 6 });
    expect(last.metadata.history.compressed).toBe(3);
    expect(last.metadata.history.summary).toContain('[offline provider');
    expect(last.metadata.history.kept).toBe(4); // primer + summary + 2 recents
    const s = await json(await get(`/api/v1/sessions/${ext}`, h));
    expect(s.context.history_summary).toMatchObject({ compressed_messages: 3 });
    const events = await json(await get(`/api/v1/tasks/${last.task_id}/events`, h));
    expect(events.events.some((e: { type: string; payload?: { stage?: string } }) => e.type === 'PROGRESS' && e.payload?.stage === 'history_compression')).toBe(
      true,
    );
  });
});
