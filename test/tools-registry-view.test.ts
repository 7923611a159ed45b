/**
 * ToolRegistry.withExtraTools: a view with extra tools knows and runs them next to the base
 * registry's, refuses a name the base has, leaves the base unchanged, and shares the base's
 * rate limits (one per-minute limit counted across the base and every view, against a real
 * nats-server KV bucket), usage records and compiled validators; `close()` on a view ends
 * only its own tools.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '../src/bus/index.js';
import { ToolRegistry, type Tool, type ToolParameters, type ToolUsage } from '../src/tools/index.js';
import { startTestNats, type TestNats } from './harness/nats.js';
import { connectTestBus } from './harness/bus.js';

let nats: TestNats;
let bus: Bus;

beforeAll(async () => {
  nats = await startTestNats();
  bus = await connectTestBus(nats.url, 'tools-registry-view');
});
afterAll(async () => {
  await bus?.close();
  await nats?.stop();
});

const schema = (): ToolParameters => ({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: false });

function tool(name: string, o: Partial<Tool> = {}): Tool & { closed: number } {
  const t = {
    name,
    description: name,
    category: 'test',
    version: '1.0.0',
    parameters: schema(),
    timeoutMs: 5000,
    costPerUse: 0,
    dangerous: false,
    retryable: true,
    closed: 0,
    async run(args: Record<string, unknown>) {
      return { output: { n: args.n, by: name }, text: `${name} ${String(args.n)}` };
    },
    async close() {
      t.closed++;
    },
    ...o,
  };
  return t;
}

describe('ToolRegistry.withExtraTools', () => {
  it('knows, lists and runs the extra tools next to the base ones; the base stays as it was; a name the base has is refused', async () => {
    const base = new ToolRegistry([tool('alpha')]);
    const view = base.withExtraTools([tool('beta')]);
    expect(view.names()).toEqual(['alpha', 'beta']);
    expect(view.list().map((t) => t.name)).toEqual(['alpha', 'beta']);
    expect(base.names()).toEqual(['alpha']);
    expect(base.get('beta')).toBeUndefined();
    expect((await view.execute('beta', { n: 2 })).text).toBe('beta 2');
    expect((await view.execute('alpha', { n: 3 })).text).toBe('alpha 3');
    await expect(base.execute('beta', { n: 1 })).rejects.toThrow(/Tool not found: beta/);
    // The view validates its extra tools' arguments like the base's.
    await expect(view.execute('beta', { n: 'x' })).rejects.toThrow(/arguments\.n must be number/);
    await expect(view.execute('beta', { n: 1, m: 2 })).rejects.toThrow(/arguments\.m is not a parameter/);
    expect(() => base.withExtraTools([tool('alpha')])).toThrow(/alpha registered twice/);
  });

  it('shares usage records and compiled validators: one schema object is compiled once for every view', async () => {
    const usage: ToolUsage[] = [];
    const base = new ToolRegistry([tool('alpha')], { onUsage: (u) => usage.push(u) });
    const shared = schema();
    const v1 = base.withExtraTools([tool('send', { parameters: shared })]);
    const v2 = base.withExtraTools([tool('send', { parameters: shared })]);
    const t1 = v1.get('send')!;
    v1.validate(t1, { n: 1 });
    const compiled = (v1 as unknown as { shared: { validators: WeakMap<object, unknown> } }).shared.validators.get(shared);
    expect(compiled).toBeTypeOf('function');
    v2.validate(v2.get('send')!, { n: 2 });
    expect((v2 as unknown as { shared: { validators: WeakMap<object, unknown> } }).shared.validators.get(shared)).toBe(compiled);
    await v1.execute('send', { n: 1 }, { taskId: 't1' });
    await v2.execute('alpha', { n: 2 }, { taskId: 't2' });
    expect(usage.map((u) => [u.tool, u.taskId, u.success])).toEqual([
      ['send', 't1', true],
      ['alpha', 't2', true],
    ]);
  });

  it("counts a tool's calls through the base and every view against one per-minute limit", async () => {
    const name = `limited_${randomUUID().slice(0, 8)}`;
    const base = new ToolRegistry([tool(name, { rateLimitSetting: 'TEST_RATE_LIMIT' })], { rateLimits: { TEST_RATE_LIMIT: 3 }, rateKv: bus.kv.ratelimit });
    const v1 = base.withExtraTools([tool('beta')]);
    const v2 = base.withExtraTools([tool('gamma')]);
    expect((await base.execute(name, { n: 1 })).success).toBe(true);
    expect((await v1.execute(name, { n: 2 })).success).toBe(true);
    expect((await v2.execute(name, { n: 3 })).success).toBe(true);
    await expect(v1.execute(name, { n: 4 })).rejects.toThrow(/rate limit exceeded for tool .*: 3 calls per minute \(TEST_RATE_LIMIT\)/);
    await expect(base.execute(name, { n: 5 })).rejects.toThrow(/rate limit exceeded/);
  });

  it('a tool with a limit of its own (rateLimit: an MCP server or OpenAPI source) counts its calls under its key, shared by the tools of one source', async () => {
    const key = `src.${randomUUID()}`;
    const base = new ToolRegistry([], { rateKv: bus.kv.ratelimit });
    const a = tool(`mcp.s.a_${randomUUID().slice(0, 4)}`, { rateLimit: { perMinute: 2, key } });
    const b = tool(`mcp.s.b_${randomUUID().slice(0, 4)}`, { rateLimit: { perMinute: 2, key } });
    const view = base.withExtraTools([a, b]);
    expect((await view.execute(a.name, { n: 1 })).success).toBe(true);
    expect((await view.execute(b.name, { n: 2 })).success).toBe(true);
    await expect(view.execute(a.name, { n: 3 })).rejects.toThrow(
      new RegExp(`rate limit exceeded for tool ${a.name.replace(/\./g, '\\.')}: 2 calls per minute \\(${key}\\)`),
    );
    // Another view made later (the same owner's tools listed again) shares the count.
    await expect(base.withExtraTools([a, b]).execute(b.name, { n: 4 })).rejects.toThrow(/rate limit exceeded/);
  });

  it("close() on a view ends only its own tools; the base's close ends the base's", async () => {
    const alpha = tool('alpha');
    const beta = tool('beta');
    const base = new ToolRegistry([alpha]);
    await base.withExtraTools([beta]).close();
    expect([alpha.closed, beta.closed]).toEqual([0, 1]);
    await base.close();
    expect([alpha.closed, beta.closed]).toEqual([1, 1]);
  });
});
