/**
 * The catalogue shipped in config/agents, loaded by a service started with its defaults: every
 * file is valid, every agent's tool is a registered built-in tool (else start-up fails) whose
 * parameters are the agent's input, and the list endpoint reports exactly the files present,
 * the spec's fourteen agents among them. An input the catalogue's rules accept but the agent's
 * tool's own schema refuses is a 400 at submission on both entry points.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentCatalogue } from '../src/agents/index.js';
import { json, startTestApp, type TestApp } from './helpers/app.js';

/** The shipped agents (16: the spec's table and two designed beside it). */
const SHIPPED = [
  'ad-creative-analyze',
  'ads-transparency',
  'broker-news',
  'browser-screenshot',
  'competitor-discover',
  'insider-transactions',
  'keyword-extract',
  'lp-batch-analyze',
  'lp-visual-analyze',
  'microblog-sentiment',
  'news-aggregator',
  'organic-search',
  'portal-jp-ads',
  'regulatory-filings',
  'serp-ads',
  'social-ad-library',
];

/** The agent table of the spec (interface-spec.md, "Agent definition"). */
const SPEC_TABLE = [
  'serp-ads',
  'portal-jp-ads',
  'social-ad-library',
  'competitor-discover',
  'ads-transparency',
  'lp-visual-analyze',
  'lp-batch-analyze',
  'ad-creative-analyze',
  'keyword-extract',
  'browser-screenshot',
  'regulatory-filings',
  'microblog-sentiment',
  'broker-news',
  'news-aggregator',
];

const dir = join(process.cwd(), 'config/agents');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
}, 60_000);
afterAll(async () => {
  await t?.stop();
});

describe('the shipped agent catalogue (config/agents)', () => {
  it('holds exactly the shipped agents, one file each, the spec table among them', () => {
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => f.replace(/\.yaml$/, ''))
      .sort();
    expect(files).toEqual(SHIPPED);
    expect(
      loadAgentCatalogue(dir)
        .list()
        .map((a) => a.id),
    ).toEqual(SHIPPED);
    expect(SHIPPED).toEqual(expect.arrayContaining(SPEC_TABLE));
  });

  it('the service starts with it (every tool registered) and GET /api/v1/agents reports them all', async () => {
    const body = await json(await fetch(`${t.base}/api/v1/agents`));
    expect(body.count).toBe(SHIPPED.length);
    expect(body.agents.map((a: { id: string }) => a.id)).toEqual(SHIPPED);
    const tools = new Set((await json(await fetch(`${t.base}/api/v1/tools`))).map((x: { name: string }) => x.name));
    for (const a of body.agents as { id: string; tool: string; category: string; cost_per_call: number; input_schema: { required: string[] } }[]) {
      expect(tools.has(a.tool), `${a.id} -> ${a.tool}`).toBe(true);
      expect(['ads_research', 'financial', 'web']).toContain(a.category);
      expect(a.cost_per_call).toBeGreaterThanOrEqual(0);
    }
    // Every agent is its tool: the agent's fields are the tool's parameters, of the same type,
    // and whatever the tool requires the agent requires or fills in.
    const params = new Map(
      (await json(await fetch(`${t.base}/api/v1/tools`))).map(
        (x: { name: string; parameters: { properties: Record<string, { type?: string }>; required?: string[] } }) => [x.name, x.parameters],
      ),
    );
    for (const a of body.agents as {
      id: string;
      tool: string;
      input_schema: { required: string[]; properties: Record<string, { type: string; default?: unknown }> };
    }[]) {
      const tp = params.get(a.tool) as { properties: Record<string, { type?: string }>; required?: string[] };
      for (const [k, p] of Object.entries(a.input_schema.properties)) {
        expect(Object.keys(tp.properties), `${a.id}.${k}`).toContain(k);
        if (tp.properties[k].type) expect(tp.properties[k].type, `${a.id}.${k}`).toBe(p.type);
      }
      for (const k of tp.required ?? [])
        expect(a.input_schema.required.includes(k) || a.input_schema.properties[k]?.default !== undefined, `${a.id}: ${k}`).toBe(true);
    }
    for (const id of SPEC_TABLE) {
      const one = await json(await fetch(`${t.base}/api/v1/agents/${id}`));
      expect(one.id).toBe(id);
    }
  });
});

describe("input the agent's tool would refuse is a 400 at submission, not a failed task", () => {
  // The catalogue's rules accept these; the tool's own schema (lengths, patterns, item counts) does not.
  const cases: [string, Record<string, unknown>, string][] = [
    ['serp-ads', { keywords: '' }, 'input validation failed: field keywords: must NOT have fewer than 1 characters'],
    ['serp-ads', { keywords: 'shoes', country: 'usa' }, 'input validation failed: field country: must NOT have more than 2 characters'],
    ['competitor-discover', { keywords: [] }, 'input validation failed: field keywords: must NOT have fewer than 1 items'],
    ['ads-transparency', { start_date: 'yesterday' }, 'input validation failed: field start_date: must match pattern "^\\d{4}-\\d{2}-\\d{2}$"'],
    ['lp-batch-analyze', { urls: [] }, 'input validation failed: field urls: must NOT have fewer than 1 items'],
    ['lp-batch-analyze', { urls: [''] }, 'input validation failed: field urls[0]: must NOT have fewer than 1 characters'],
  ];
  const post = (path: string, body: unknown) =>
    fetch(t.base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it.each(cases)('POST /api/v1/agents/%s %j', async (id, input, message) => {
    const r = await post(`/api/v1/agents/${id}`, { input });
    expect(r.status).toBe(400);
    expect(await json(r)).toEqual({ error: message });
  });

  it.each(cases)('POST /api/v1/tasks with context.agent %s and agent_input %j', async (id, input, message) => {
    const r = await post('/api/v1/tasks', { query: 'x', context: { agent: id, agent_input: input } });
    expect(r.status).toBe(400);
    expect(await json(r)).toEqual({ error: message });
  });
});
