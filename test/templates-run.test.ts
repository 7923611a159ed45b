/**
 * Templates, disable_ai, skills and enable_verification through the whole service, with the
 * shipped catalogues (config/templates, config/skills): submission checks (400s), a
 * text-only template run with no model call at all, a model template refused step by step
 * under disable_ai, a skill's instructions and tools driving the agent, the verification
 * step's findings, ListTemplates over gRPC and GET /api/v1/skills.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OrchestratorService } from '../src/gen/svc/v1/orchestrator_pb.js';
import { TEST_RPC_TOKEN, json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, scriptedProvider } from './helpers/openai-server.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ MAX_TOKENS_PER_REQUEST: '0' });
});
afterAll(async () => {
  await t?.stop();
});

const post = (app: TestApp, body: unknown) =>
  fetch(`${app.base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function finished(app: TestApp, id: string) {
  return waitFor(async () => {
    const s = await json(await fetch(`${app.base}/api/v1/tasks/${id}`));
    return /COMPLETED|FAILED/.test(s.status) ? s : undefined;
  }, 30_000);
}

describe('submission', () => {
  it('refuses unknown templates, versions and skills, and disable_ai without a template (400)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ context: { template: 'nope' } }, 'unknown template: nope'],
      [{ context: { template_name: 'nope' } }, 'unknown template: nope'],
      [{ context: { template: 'weekly-report', template_version: '9.9.9' } }, 'template weekly-report has no version 9.9.9'],
      [{ context: { template_version: '1.0.0' } }, 'context.template_version needs context.template'],
      [{ context: { template: 'weekly-report', template_name: 'weekly-report' } }, 'use context.template or context.template_name, not both'],
      [{ context: { disable_ai: true } }, 'disable_ai runs a template without a model: it needs context.template'],
      [{ context: { disable_ai: 'yes', template: 'release-notes' } }, 'context.disable_ai must be a boolean'],
      [{ skill: 'nope' }, 'unknown skill: nope'],
      [{ skill: 'code-review', context: { template: 'release-notes' } }, 'a task runs either a skill or a template, not both'],
    ];
    for (const [fields, msg] of cases) {
      const r = await post(t, { query: 'x', ...fields });
      expect(r.status, JSON.stringify(fields)).toBe(400);
      expect((await json(r)).error).toBe(msg);
    }
  });
});

describe('templates', () => {
  it('disable_ai runs a text-only template with no model call: the rendered result, the template in metadata', async () => {
    const r = await post(t, {
      query: '- faster startup\n- fixed a leak',
      context: { template: 'release-notes', disable_ai: true, prompt_params: { product: 'Taskorch', version: '1.2.0' } },
    });
    const { task_id: id } = await json(r);
    const s = await finished(t, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.result).toContain('# Taskorch 1.2.0 (unreleased)');
    expect(s.result).toContain('- faster startup');
    expect(s.metadata.template).toMatchObject({ name: 'release-notes', version: '1.0.0', key: 'release-notes@1.0.0', disable_ai: true });
    expect(s.usage.total_tokens).toBe(0);
    const [{ n }] = await t.app.store.sql`SELECT count(*)::int AS n FROM llm_calls WHERE task_id = ${id}::uuid`;
    expect(n).toBe(0);
  });

  it('disable_ai with a template that needs a model fails at that step, naming it; no model is called', async () => {
    const { task_id: id } = await json(await post(t, { query: 'notes', context: { template: 'weekly-report', disable_ai: true } }));
    const s = await finished(t, id);
    expect(s.status).toBe('TASK_STATUS_FAILED');
    expect(s.error).toBe('disable_ai: template weekly-report@1.1.0 step "outline" needs a model, and disable_ai forbids model calls');
    const [{ n }] = await t.app.store.sql`SELECT count(*)::int AS n FROM llm_calls WHERE task_id = ${id}::uuid`;
    expect(n).toBe(0);
  });

  it('runs a model template step by step; template_version picks an older version', async () => {
    const { task_id: id } = await json(await post(t, { query: 'shipped X; Y is late', context: { template: 'weekly-report', template_version: '1.0.0' } }));
    const s = await finished(t, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.metadata.template).toMatchObject({ key: 'weekly-report@1.0.0', steps: 2 });
    const { events } = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 20_000 });
    const started = events.filter((e) => e.event === 'AGENT_STARTED').map((e) => JSON.parse(e.data).agent_id);
    expect(started).toEqual(['template:outline', 'template:draft']);
  });

  it('ListTemplates over gRPC lists every version with its key and content hash', async () => {
    const asSystem = (next: (r: any) => any) => (req: any) => {
      req.header.set('authorization', `Bearer ${TEST_RPC_TOKEN}`);
      req.header.set('x-caller-kind', 'system');
      return next(req);
    };
    const client = createClient(OrchestratorService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${t.app.grpcPort}`, interceptors: [asSystem] }));
    const r = await client.listTemplates({});
    const keys = r.templates.map((x) => x.key);
    expect(keys).toEqual(expect.arrayContaining(['release-notes@1.0.0', 'weekly-report@1.0.0', 'weekly-report@1.1.0']));
    expect(r.templates.every((x) => /^[0-9a-f]{64}$/.test(x.contentHash))).toBe(true);
  });
});

describe('skills over HTTP', () => {
  it('GET /api/v1/skills lists the shipped skills with their versions', async () => {
    const list = await json(await fetch(`${t.base}/api/v1/skills`));
    const cr = list.skills.find((x: { name: string }) => x.name === 'code-review');
    expect(cr).toMatchObject({ version: '2.0.0' });
    expect((await json(await fetch(`${t.base}/api/v1/skills/code-review`))).instructions).toContain('senior engineer');
    expect((await fetch(`${t.base}/api/v1/skills/nope`)).status).toBe(404);
  });
});

describe('skills and verification with a model', () => {
  let llm: OpenAiTestServer;
  let m: TestApp;
  beforeAll(async () => {
    llm = await startOpenAiServer();
    m = await startTestApp(
      { MAX_TOKENS_PER_REQUEST: '0', MAX_COST_PER_REQUEST: '0' },
      {
        llm: scriptedProvider(llm),
      },
    );
  });
  afterAll(async () => {
    await m?.stop();
    await llm?.close();
  });
  beforeEach(() => llm.reset());

  it("a skill's instructions are the agent's system prompt, its tools the only ones offered, its tier the model's", async () => {
    llm.setDefault({ type: 'completion', content: 'Looks good.' });
    const { task_id: id } = await json(await post(m, { query: `Review this change ${randomUUID()}`, skill: 'code-review' }));
    const s = await finished(m, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    const req = llm.requests[0]!;
    expect(String((req.messages as { role: string; content: string }[])[0]!.content)).toContain('senior engineer reviewing a change');
    expect(((req.body.tools ?? []) as { function: { name: string } }[]).map((x) => x.function.name)).toEqual(['file_read']);
    expect(req.model).toBe('m-medium');
    expect(s.metadata.skill).toMatchObject({ name: 'code-review', version: '2.0.0' });
    expect(s.metadata.role).toBe('critic');
  });

  it('enable_verification adds a verifier step whose findings go into metadata', async () => {
    llm.enqueue(
      { type: 'completion', content: 'Paris is the capital of Germany.' },
      { type: 'completion', content: '{"verdict": "fail", "findings": ["Paris is the capital of France, not Germany."]}' },
    );
    const { task_id: id } = await json(await post(m, { query: 'What is the capital of France?', mode: 'simple', enable_verification: true }));
    const s = await finished(m, id);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.result).toBe('Paris is the capital of Germany.');
    expect(s.metadata.verification).toMatchObject({ verdict: 'fail', findings: ['Paris is the capital of France, not Germany.'], model: 'm-small' });
    expect(String(llm.requests[1]!.messages!.at(-1)!.content)).toContain('Paris is the capital of Germany.');
  });
});
