/**
 * Approvals (issue 15 §3) against a scripted OpenAI-compatible model: a tool policy holds a
 * calculator call for a person (approved, modified, refused: the model is told why), a task
 * with require_approval waits before its first action (approved: it runs; refused or timed
 * out: FAILED with `approval rejected: ...`), the decision endpoint's every error, the inbox,
 * and ApproveTask / GetPendingApprovals over gRPC.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Code, createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { Http2SessionManager, createGrpcTransport } from '@connectrpc/connect-node';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OrchestratorService } from '../src/gen/svc/v1/orchestrator_pb.js';
import { TEST_RPC_TOKEN, json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { colleagueOf as colleagueIn, registerUser, type TestUser } from './helpers/users.js';
import { rpcFailure } from './helpers/connect.js';
import { scriptedProvider, startOpenAiServer, type OpenAiTestServer, type RecordedRequest } from './helpers/openai-server.js';
import { startServer, type TestServer } from './helpers/tools-web.js';

let t: TestApp;
let llm: OpenAiTestServer;
/** The search backend (/search) and the page it finds (/page), for the research workflow. */
let web: TestServer;
const h2: Http2SessionManager[] = [];

beforeAll(async () => {
  llm = await startOpenAiServer();
  web = await startServer((req, res) =>
    req.url?.startsWith('/search')
      ? res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ results: [{ title: 'Streams', url: `${web.origin}/page`, content: 'Streams hold messages.' }] }))
      : res.writeHead(200, { 'content-type': 'text/plain' }).end('JetStream streams hold messages.'),
  );
  const dir = mkdtempSync(join(tmpdir(), 'approvals-'));
  const features = join(dir, 'features.yaml');
  writeFileSync(features, 'approvals:\n  tools: [calculator, web_search, web_fetch]\n');
  const templates = join(dir, 'templates');
  mkdirSync(templates);
  writeFileSync(
    join(templates, 'calc-steps.yaml'),
    "name: calc-steps\nversion: '1.0.0'\ndescription: one calculator step\nsteps:\n" +
      "  - id: sum\n    type: tool\n    tool: calculator\n    arguments:\n      expression: '${query}'\n" +
      "  - id: out\n    type: text\n    text: 'result: ${steps.sum}'\noutput: out\n",
  );
  t = await startTestApp(
    {
      CONFIG_PATH: features,
      TOOLS_HTTP_ALLOW_HOSTS: '127.0.0.1/32',
      WEB_SEARCH_PROVIDER: 'searxng',
      SEARXNG_URL: web.origin,
      TEMPLATES_DIR: templates,
      APPROVAL_TIMEOUT_SECONDS: '600',
      TOOL_PARALLELISM: '2',
      GATEWAY_SKIP_AUTH: '0',
      PASSWORD_SCRYPT_N: '1024',
      JWT_SECRET: 'approvals-test-secret-0123456789abcdefgh',
      RATE_LIMIT_REQUESTS: '100000',
      RATE_LIMIT_TASK_LIST_BURST: '100000',
      MAX_TOKENS_PER_REQUEST: '0',
      MAX_COST_PER_REQUEST: '0',
    },
    { llm: scriptedProvider(llm) },
  );
});
afterAll(async () => {
  for (const m of h2) m.abort();
  await t?.stop();
  await llm?.close();
});
beforeEach(() => llm.reset());

type User = TestUser;
const register = () => registerUser(t.base, 'ap');
const colleagueOf = (u: User) => colleagueIn(t.app.store.sql, u);

const post = (path: string, body: unknown, h: Record<string, string>) =>
  fetch(t.base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...h }, body: typeof body === 'string' ? body : JSON.stringify(body) });

async function submit(u: User, body: Record<string, unknown>): Promise<string> {
  const r = await post('/api/v1/tasks', body, u.h);
  const b = await json(r);
  expect(r.status, JSON.stringify(b)).toBe(200);
  return b.task_id;
}

interface Pending {
  approval_id: string;
  workflow_id: string;
  query: string;
  proposed_action: Record<string, any>;
  reason: string;
  requested_at: string;
  metadata: Record<string, any>;
}

/** The task's pending approval, once it waits for it (PAUSED). */
async function pendingOf(u: User, id: string): Promise<Pending> {
  return waitFor(async () => {
    const b = await json(await fetch(`${t.base}/api/v1/approvals?status=pending`, { headers: u.h }));
    const a = (b.approvals as Pending[]).find((x) => x.workflow_id === id);
    return a && (await t.app.store.getTask(id))?.status === 'TASK_STATUS_PAUSED' ? a : undefined;
  }, 20_000);
}

const decide = (u: User, body: Record<string, unknown>) => post('/api/v1/approvals/decision', body, u.h);

async function finished(u: User, id: string) {
  return waitFor(async () => {
    const s = await json(await fetch(`${t.base}/api/v1/tasks/${id}`, { headers: u.h }));
    return /COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(s.status) ? s : undefined;
  }, 30_000);
}

async function events(u: User, id: string) {
  const { events: evs } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 30_000, headers: u.h });
  return evs.filter((e) => e.event !== 'done').map((e) => JSON.parse(e.data) as { type: string; seq: number; message: string; payload?: any });
}

/** The body validates against its component schema of /openapi.json. */
async function expectSchema(name: string, body: unknown): Promise<void> {
  const doc = await json(await fetch(`${t.base}/openapi.json`));
  const check = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(doc.components.schemas[name]);
  expect(check(body), `${name}: ${JSON.stringify(check.errors)}`).toBe(true);
}

const toolMessages = () => llm.requests.flatMap((r) => (r.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content)));

const calc = (expression: string) => ({
  type: 'completion' as const,
  content: '',
  toolCalls: [{ id: `c-${randomUUID().slice(0, 8)}`, name: 'calculator', arguments: JSON.stringify({ expression }) }],
});

describe('tool policies', () => {
  it('approved: the tool runs after the decision; APPROVAL_REQUESTED and APPROVAL_DECISION carry the spec fields', async () => {
    const u = await register();
    llm.enqueue(calc('2+3'), { type: 'completion', content: 'The answer is 5.' });
    const id = await submit(u, { query: 'What is 2+3?', mode: 'standard' });
    const a = await pendingOf(u, id);
    expect(a).toMatchObject({ workflow_id: id, query: 'What is 2+3?', proposed_action: { tool: 'calculator', arguments: { expression: '2+3' } } });
    expect(a.reason).toMatch(/calculator/);
    expect(a.metadata).toMatchObject({ scope: 'tool', timeout_seconds: 600 });
    expect(toolMessages()).toEqual([]); // nothing ran yet
    const r = await decide(u, { approval_id: a.approval_id, workflow_id: id, approved: true, feedback: 'fine' });
    expect(r.status).toBe(200);
    const body = await json(r);
    expect(body).toEqual({ success: true, approval_id: a.approval_id, workflow_id: id, status: 'approved' });
    await expectSchema('ApprovalDecisionResponse', body);
    await expectSchema('ApprovalDecisionRequest', { approval_id: a.approval_id, workflow_id: id, approved: true, feedback: 'fine' });
    const s = await finished(u, id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    expect(s.result).toBe('The answer is 5.');
    expect(toolMessages().join()).toContain('5');
    const evs = await events(u, id);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    const req = evs.find((e) => e.type === 'APPROVAL_REQUESTED')!;
    expect(req.payload).toEqual({
      approval_id: a.approval_id,
      proposed_action: { tool: 'calculator', arguments: { expression: '2+3' } },
      reason: a.reason,
      timeout_seconds: 600,
    });
    const dec = evs.find((e) => e.type === 'APPROVAL_DECISION')!;
    expect(dec.payload).toEqual({ approval_id: a.approval_id, approved: true, feedback: 'fine', approved_by: u.userId });
    const types = evs.map((e) => e.type);
    expect(types.indexOf('APPROVAL_DECISION')).toBeLessThan(types.indexOf('TOOL_OBSERVATION'));
    // Decided once: the second decision is a conflict, and the inbox no longer lists it.
    const again = await decide(u, { approval_id: a.approval_id, workflow_id: id, approved: false });
    expect(again.status).toBe(409);
    expect(await json(again)).toEqual({ error: 'Approval already decided' });
    const inbox = await json(await fetch(`${t.base}/api/v1/approvals`, { headers: u.h }));
    expect(inbox.approvals.find((x: Pending) => x.approval_id === a.approval_id)).toBeUndefined();
  });

  it('modified_action replaces the arguments (a JSON string of {arguments})', async () => {
    const u = await register();
    llm.enqueue(calc('2+3'), { type: 'completion', content: 'done' });
    const id = await submit(u, { query: 'Compute something', mode: 'standard' });
    const a = await pendingOf(u, id);
    // Another tool cannot be swapped in: a 400 naming it, and the approval stays pending.
    const other = await decide(u, {
      approval_id: a.approval_id,
      workflow_id: id,
      approved: true,
      modified_action: { tool: 'bash', arguments: { command: 'ls' } },
    });
    expect(other.status).toBe(400);
    expect((await json(other)).error).toMatch(/"bash".*"calculator"/);
    const r = await decide(u, {
      approval_id: a.approval_id,
      workflow_id: id,
      approved: true,
      modified_action: JSON.stringify({ arguments: { expression: '10*10' } }),
    });
    expect(r.status).toBe(200);
    expect((await finished(u, id)).status).toBe('TASK_STATUS_COMPLETED');
    expect(toolMessages().join()).toContain('100');
    const dec = (await events(u, id)).find((e) => e.type === 'APPROVAL_DECISION')!;
    expect(dec.payload.modified_action).toEqual({ arguments: { expression: '10*10' } });
  });

  it('refused: the tool does not run, the model is told why, and the task goes on', async () => {
    const u = await register();
    llm.enqueue(calc('6*7'), { type: 'completion', content: 'I may not compute that.' });
    const id = await submit(u, { query: 'What is 6*7?', mode: 'standard' });
    const a = await pendingOf(u, id);
    const r = await decide(u, { approval_id: a.approval_id, workflow_id: id, approved: false, feedback: 'no arithmetic today' });
    expect(await json(r)).toMatchObject({ success: true, status: 'rejected' });
    const s = await finished(u, id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    const told = toolMessages();
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/refused/);
    expect(told[0]).toContain('no arithmetic today');
    expect(told[0]).not.toContain('42');
    const evs = await events(u, id);
    expect(evs.find((e) => e.type === 'TOOL_INVOKED')).toBeUndefined();
    expect(evs.find((e) => e.type === 'TOOL_OBSERVATION')!.payload).toMatchObject({ tool: 'calculator', success: false, refused: true });
    expect(evs.find((e) => e.type === 'APPROVAL_DECISION')!.payload).toMatchObject({ approved: false, feedback: 'no arithmetic today' });
  });

  it('two held calls of one turn: each is decided before either runs, one wait at a time', async () => {
    const u = await register();
    const twoCalls = {
      type: 'completion' as const,
      content: '',
      toolCalls: [
        { id: 'p1', name: 'calculator', arguments: '{"expression":"1+1"}' },
        { id: 'p2', name: 'calculator', arguments: '{"expression":"2+2"}' },
      ],
    };
    llm.enqueue(twoCalls, { type: 'completion', content: 'two and four' });
    const id = await submit(u, { query: 'Two sums', mode: 'standard' });
    const first = await pendingOf(u, id);
    expect(first.proposed_action.arguments).toEqual({ expression: '1+1' });
    await decide(u, { approval_id: first.approval_id, workflow_id: id, approved: true });
    const second = await waitFor(async () => {
      const a = await pendingOf(u, id);
      return a.approval_id !== first.approval_id ? a : undefined;
    }, 20_000);
    expect(second.proposed_action.arguments).toEqual({ expression: '2+2' });
    const [{ n }] = await t.app.store.sql`SELECT count(*)::int AS n FROM tool_calls WHERE task_id = ${id}::uuid`;
    expect(n).toBe(0); // the first, approved, did not run while the second waited
    expect(toolMessages()).toEqual([]);
    await decide(u, { approval_id: second.approval_id, workflow_id: id, approved: false, feedback: 'once is enough' });
    expect((await finished(u, id)).status).toBe('TASK_STATUS_COMPLETED');
    const told = toolMessages();
    expect(told).toHaveLength(2);
    expect(told[0]).toContain('2');
    expect(told[1]).toMatch(/refused.*once is enough/);
    const evs = await events(u, id);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    expect(evs.filter((e) => e.type === 'APPROVAL_REQUESTED')).toHaveLength(2);
    expect(evs.filter((e) => e.type === 'APPROVAL_DECISION')).toHaveLength(2);
    // No tool of the turn ran before both were decided.
    const types = evs.map((e) => e.type);
    expect(types.indexOf('TOOL_INVOKED')).toBeGreaterThan(types.lastIndexOf('APPROVAL_DECISION'));
  });
});

describe('tool policies in a workflow template (no model)', () => {
  it('approved with modified arguments, the step runs with them; refused, the task fails', async () => {
    const u = await register();
    const body = { query: '1+1', context: { template: 'calc-steps', disable_ai: true } };
    const id = await submit(u, body);
    const a = await pendingOf(u, id);
    expect(a.proposed_action).toEqual({ tool: 'calculator', arguments: { expression: '1+1' } });
    await decide(u, { approval_id: a.approval_id, workflow_id: id, approved: true, modified_action: { expression: '6*7' } });
    const s = await finished(u, id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    expect(s.result).toContain('42');
    const id2 = await submit(u, body);
    const b = await pendingOf(u, id2);
    await decide(u, { approval_id: b.approval_id, workflow_id: id2, approved: false, feedback: 'nope' });
    const s2 = await finished(u, id2);
    expect([s2.status, s2.error]).toEqual(['TASK_STATUS_FAILED', 'approval rejected: nope']);
  });
});

describe("tool policies hold the research workflow's own search and reads", () => {
  const system = (r: RecordedRequest) => String((r.messages ?? []).find((m) => m.role === 'system')?.content ?? '');
  const pageReads = () => web.requests.filter((x) => x.url === '/page').length;
  /** The task's next pending approval after `seen`. */
  const nextOf = (u: User, id: string, seen: string[]) =>
    waitFor(async () => {
      const a = await pendingOf(u, id);
      return seen.includes(a.approval_id) ? undefined : a;
    }, 20_000);
  beforeEach(() =>
    // Researchers that read nothing themselves: the workflow reads the search results.
    llm.setDefault((r) =>
      system(r).startsWith('Break the research question')
        ? { type: 'completion', content: '["Q"]' }
        : JSON.stringify(r.messages).includes('Write a research report')
          ? { type: 'completion', content: 'Streams hold messages [1].' }
          : { type: 'completion', content: 'I know this already.' },
    ),
  );

  it('approved, the search and the read run; their waits are keyed by the steps they hold', async () => {
    const u = await register();
    const searches = web.requests.length;
    const id = await submit(u, { query: 'How do streams work?', research_strategy: 'quick' });
    const s1 = await pendingOf(u, id);
    expect(s1.proposed_action).toEqual({ tool: 'web_search', arguments: { query: 'How do streams work?', max_results: 3 } });
    expect([web.requests.length, llm.requests.length]).toEqual([searches, 0]); // nothing ran yet
    await decide(u, { approval_id: s1.approval_id, workflow_id: id, approved: true });
    const r1 = await nextOf(u, id, [s1.approval_id]);
    expect(r1.proposed_action).toEqual({ tool: 'web_fetch', arguments: { url: `${web.origin}/page` } });
    const reads = pageReads();
    await decide(u, { approval_id: r1.approval_id, workflow_id: id, approved: true });
    const s = await finished(u, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.metadata.citations.map((c: { url: string }) => c.url)).toEqual([`${web.origin}/page`]);
    expect(pageReads()).toBe(reads + 1);
    const keys = await t.app.store.sql`SELECT wait_key FROM task_waits WHERE task_id = ${id}::uuid ORDER BY created_at`;
    expect(keys.map((k) => k.wait_key)).toEqual(['approval-research-search', 'approval-research-read-0']);
  });

  it('a refused search fails the task before any model call; a refused read is skipped (here: nothing read, so no report)', async () => {
    const u = await register();
    const searches = web.requests.length;
    const id = await submit(u, { query: 'Do not search', research_strategy: 'quick' });
    const a = await pendingOf(u, id);
    await decide(u, { approval_id: a.approval_id, workflow_id: id, approved: false, feedback: 'no searching' });
    const s = await finished(u, id);
    expect([s.status, s.error]).toEqual(['TASK_STATUS_FAILED', 'approval rejected: no searching (research needs its first web_search)']);
    expect([web.requests.length, llm.requests.length]).toEqual([searches, 0]);

    const reads = pageReads();
    const id2 = await submit(u, { query: 'Search but do not read', research_strategy: 'quick' });
    const b = await pendingOf(u, id2);
    await decide(u, { approval_id: b.approval_id, workflow_id: id2, approved: true });
    const c = await nextOf(u, id2, [b.approval_id]);
    expect(c.proposed_action.tool).toBe('web_fetch');
    await decide(u, { approval_id: c.approval_id, workflow_id: id2, approved: false, feedback: 'not that page' });
    const s2 = await finished(u, id2);
    expect(s2.status).toBe('TASK_STATUS_FAILED');
    expect(s2.error).toMatch(/^research read no web page/);
    expect(pageReads()).toBe(reads);
  });
});

describe('require_approval (the whole task)', () => {
  it('waits before its first action; approved, it runs', async () => {
    const u = await register();
    const id = await submit(u, { query: 'approve me first', mode: 'simple', context: { require_approval: 'true' } });
    const a = await pendingOf(u, id);
    expect(a.proposed_action).toMatchObject({ action: 'run_task', query: 'approve me first' });
    expect(a.reason).toBe('approval required before the task runs');
    expect(llm.requests).toHaveLength(0); // no model call before the approval
    expect((await decide(u, { approval_id: a.approval_id, workflow_id: id, approved: true })).status).toBe(200);
    const s = await finished(u, id);
    expect(s.status).toBe('TASK_STATUS_COMPLETED');
    expect(s.result).toBe('echo: approve me first');
  });

  it('refused: FAILED with the feedback as its error, no model call', async () => {
    const u = await register();
    const id = await submit(u, { query: 'refuse me', mode: 'simple', context: { require_approval: true } });
    const a = await pendingOf(u, id);
    await decide(u, { approval_id: a.approval_id, workflow_id: id, approved: false, feedback: 'not this one' });
    const s = await finished(u, id);
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toBe('approval rejected: not this one');
    expect(llm.requests).toHaveLength(0);
  });

  it('timed out: refused with reason timeout by the durable timer', async () => {
    const u = await register();
    const id = await submit(u, { query: 'nobody answers', mode: 'simple', context: { require_approval: '1' } });
    const a = await pendingOf(u, id);
    await t.app.store.sql`UPDATE task_waits SET due_at = now() - interval '1 second' WHERE id = ${a.approval_id}`;
    await t.app.waitTimers!.runOnce();
    const s = await finished(u, id);
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toBe('approval rejected: timeout');
    const dec = (await events(u, id)).find((e) => e.type === 'APPROVAL_DECISION')!;
    expect(dec.payload).toMatchObject({ approval_id: a.approval_id, approved: false, reason: 'timeout', approved_by: 'timeout' });
    // The timer decided it: a late decision is a conflict.
    expect((await decide(u, { approval_id: a.approval_id, workflow_id: id, approved: true })).status).toBe(409);
  });

  it('cancelled while it waits: CANCELLED at once; the approval can no longer be decided nor listed', async () => {
    const u = await register();
    const id = await submit(u, { query: 'cancel me', mode: 'simple', context: { require_approval: true } });
    const a = await pendingOf(u, id);
    expect((await post(`/api/v1/tasks/${id}/cancel`, {}, u.h)).status).toBe(200);
    expect((await finished(u, id)).status).toBe('TASK_STATUS_CANCELLED');
    const r = await decide(u, { approval_id: a.approval_id, workflow_id: id, approved: true });
    expect([r.status, await json(r)]).toEqual([409, { error: 'Approval already decided' }]);
    const inbox = await json(await fetch(`${t.base}/api/v1/approvals`, { headers: u.h }));
    expect(inbox.count).toBe(0);
  });

  it('a context value that is not a boolean is a 400 naming the key', async () => {
    const u = await register();
    const r = await post('/api/v1/tasks', { query: 'x', context: { require_approval: 'maybe' } }, u.h);
    expect(r.status).toBe(400);
    expect((await json(r)).error).toMatch(/context.require_approval/);
  });
});

describe('POST /api/v1/approvals/decision errors, and the inbox', () => {
  let owner: User;
  let id: string;
  let a: Pending;
  beforeAll(async () => {
    owner = await register();
    id = await submit(owner, { query: 'guarded task', mode: 'simple', context: { require_approval: true } });
    a = await pendingOf(owner, id);
  });
  afterAll(async () => {
    await fetch(`${t.base}/api/v1/tasks/${id}/cancel`, { method: 'POST', headers: owner.h });
  });

  it.each([
    ['invalid JSON', '{"approval_id":', 'invalid JSON body'],
    ['a body that is not an object', '[1]', 'request body must be a JSON object'],
    ['no approval_id', { workflow_id: 'w', approved: true }, 'approval_id is required'],
    ['no workflow_id', { approval_id: 'a', approved: true }, 'workflow_id is required'],
    ['no approved', { approval_id: 'a', workflow_id: 'w' }, 'approved is required'],
    ['approved not a boolean', { approval_id: 'a', workflow_id: 'w', approved: 'yes' }, /^approved /],
  ])('400 for %s', async (_, body, msg) => {
    const r = await decide(owner, body as never);
    expect(r.status).toBe(400);
    const e = (await json(r)).error as string;
    if (typeof msg === 'string') expect(e).toBe(msg);
    else expect(e).toMatch(msg);
  });

  it('400 for a modified_action that is not a JSON object', async () => {
    for (const m of ['[1, 2]', 'not json', 7]) {
      const r = await decide(owner, { approval_id: a.approval_id, workflow_id: id, approved: true, modified_action: m });
      expect(r.status, String(m)).toBe(400);
      expect((await json(r)).error).toMatch(/modified_action must be a JSON object/);
    }
  });

  it('400 for a modified_action on a task approval (found by its workflow_id in upper case)', async () => {
    const r = await decide(owner, { approval_id: a.approval_id, workflow_id: id.toUpperCase(), approved: true, modified_action: { x: 1 } });
    expect([r.status, await json(r)]).toEqual([400, { error: 'modified_action applies to tool approvals only' }]);
    expect((await t.app.store.sql`SELECT status FROM task_waits WHERE id = ${a.approval_id}`)[0].status).toBe('pending');
  });

  it('404 for an unknown approval or another workflow_id; 404 for another tenant; 403 for a colleague', async () => {
    const notFound = { error: 'Approval not found' };
    let r = await decide(owner, { approval_id: randomUUID(), workflow_id: id, approved: true });
    expect([r.status, await json(r)]).toEqual([404, notFound]);
    r = await decide(owner, { approval_id: a.approval_id, workflow_id: randomUUID(), approved: true });
    expect([r.status, await json(r)]).toEqual([404, notFound]);
    r = await decide(owner, { approval_id: a.approval_id, workflow_id: 'not-a-uuid', approved: true });
    expect([r.status, await json(r)]).toEqual([404, notFound]);
    const stranger = await register();
    r = await decide(stranger, { approval_id: a.approval_id, workflow_id: id, approved: true });
    expect([r.status, await json(r)]).toEqual([404, notFound]);
    const colleague = await colleagueOf(owner);
    r = await decide(colleague, { approval_id: a.approval_id, workflow_id: id, approved: true });
    expect([r.status, await json(r)]).toEqual([403, { error: 'Forbidden: not the task owner' }]);
    // None of them decided anything.
    expect((await t.app.store.sql`SELECT status FROM task_waits WHERE id = ${a.approval_id}`)[0].status).toBe('pending');
    // Their inboxes do not list it.
    for (const x of [stranger, colleague]) {
      const b = await json(await fetch(`${t.base}/api/v1/approvals?status=pending`, { headers: x.h }));
      expect(b).toEqual({ approvals: [], count: 0 });
    }
  });

  it("lists the caller's pending approvals (session filter, limit); status other than pending is 400", async () => {
    const b = await json(await fetch(`${t.base}/api/v1/approvals?status=pending`, { headers: owner.h }));
    expect(b.count).toBe(1);
    await expectSchema('PendingApprovalList', b);
    expect(b.approvals[0]).toMatchObject({ approval_id: a.approval_id, workflow_id: id, query: 'guarded task' });
    expect(Date.parse(b.approvals[0].requested_at)).toBeGreaterThan(0);
    const task = await t.app.store.getTask(id);
    const bySession = await json(await fetch(`${t.base}/api/v1/approvals?session_id=${task!.session_id}`, { headers: owner.h }));
    expect(bySession.count).toBe(1);
    const other = await json(await fetch(`${t.base}/api/v1/approvals?session_id=${randomUUID()}`, { headers: owner.h }));
    expect(other.count).toBe(0);
    for (const q of ['status=approved', 'status=', 'limit=0', 'limit=101']) {
      const r = await fetch(`${t.base}/api/v1/approvals?${q}`, { headers: owner.h });
      expect(r.status, q).toBe(400);
    }
    expect((await fetch(`${t.base}/api/v1/approvals`)).status).toBe(401);
  });
});

describe('gRPC ApproveTask and GetPendingApprovals', () => {
  const clientAs = (c: { userId: string; tenantId: string }): Client<typeof OrchestratorService> => {
    const as: Interceptor = (next) => (req) => {
      req.header.set('authorization', `Bearer ${TEST_RPC_TOKEN}`);
      req.header.set('x-caller-kind', 'user');
      req.header.set('x-caller-user-id', c.userId);
      req.header.set('x-caller-tenant-id', c.tenantId);
      return next(req);
    };
    const baseUrl = `http://127.0.0.1:${t.app.grpcPort}`;
    const m = new Http2SessionManager(baseUrl);
    h2.push(m);
    return createClient(OrchestratorService, createGrpcTransport({ baseUrl, sessionManager: m, interceptors: [as] }));
  };

  it('submits with require_approval, lists it, refuses others, decides it once', async () => {
    const me = { userId: randomUUID(), tenantId: randomUUID() };
    const orch = clientAs(me);
    const sub = await orch.submitTask({ query: 'grpc guarded', requireApproval: true, options: { modeName: 'simple' } });
    const id = sub.taskId;
    const list = await waitFor(async () => {
      const r = await orch.getPendingApprovals({});
      return r.approvals.length ? r : undefined;
    }, 20_000);
    const p = list.approvals[0];
    expect(p).toMatchObject({ workflowId: id, query: 'grpc guarded', reason: 'approval required before the task runs' });
    expect(JSON.parse(p.proposedAction)).toMatchObject({ action: 'run_task' });
    expect(p.requestedAt).toBeDefined();
    expect(p.metadata).toMatchObject({ scope: 'task' });
    // The body's user_id must be the caller's (or empty).
    expect((await rpcFailure(orch.getPendingApprovals({ userId: randomUUID() }))).code).toBe(Code.PermissionDenied);
    expect((await orch.getPendingApprovals({ userId: me.userId })).approvals).toHaveLength(1);
    // Another tenant: NotFound; a colleague: PermissionDenied; nothing listed for either.
    const stranger = clientAs({ userId: randomUUID(), tenantId: randomUUID() });
    expect(await rpcFailure(stranger.approveTask({ approvalId: p.approvalId, workflowId: id, approved: true }))).toEqual({
      code: Code.NotFound,
      message: 'Approval not found',
    });
    const colleague = clientAs({ userId: randomUUID(), tenantId: me.tenantId });
    expect(await rpcFailure(colleague.approveTask({ approvalId: p.approvalId, workflowId: id, approved: true }))).toEqual({
      code: Code.PermissionDenied,
      message: 'Forbidden: not the task owner',
    });
    expect((await colleague.getPendingApprovals({})).approvals).toHaveLength(0);
    expect((await rpcFailure(orch.approveTask({ approvalId: p.approvalId, approved: true }))).code).toBe(Code.InvalidArgument);
    await waitFor(async () => (await t.app.store.getTask(id))?.status === 'TASK_STATUS_PAUSED');
    const ok = await orch.approveTask({ approvalId: p.approvalId, workflowId: id, approved: true, approvedBy: 'reviewer-1' });
    expect(ok).toMatchObject({ success: true, message: 'Approval approved' });
    expect(await rpcFailure(orch.approveTask({ approvalId: p.approvalId, workflowId: id, approved: true }))).toEqual({
      code: Code.AlreadyExists,
      message: 'Approval already decided',
    });
    await waitFor(async () => (await t.app.store.getTask(id))?.status === 'TASK_STATUS_COMPLETED', 20_000);
    const [w] = await t.app.store.sql`SELECT decided_by FROM task_waits WHERE id = ${p.approvalId}`;
    expect(w.decided_by).toBe('reviewer-1');
  });
});
