/** What research agents read is kept in their tool steps' journal entries, read back on replay, and bounded by the preset. */
import { describe, expect, it } from 'vitest';
import type { AgentContext } from '../agents/index.js';
import { ToolRegistry, type Tool } from '../tools/index.js';
import { SourceRecorder } from './research-capture.js';

/** A context whose journal survives it (a replay is a new context over the same journal). */
function journaled(journal: Map<string, unknown>): AgentContext {
  return {
    step: async (name, fn) => {
      if (journal.has(name)) return journal.get(name) as never;
      const r = await fn();
      journal.set(name, JSON.parse(JSON.stringify(r)));
      return r;
    },
    isRecorded: (n) => journal.has(n),
    emit: () => undefined,
    checkpoint: () => {},
    signal: new AbortController().signal,
  };
}

function registry(calls: string[]) {
  const tool = (name: string, run: Tool['run']): Tool =>
    ({
      name,
      description: name,
      category: 'web',
      version: '1',
      parameters: { type: 'object', properties: {} },
      timeoutMs: 5000,
      costPerUse: 0,
      dangerous: false,
      retryable: true,
      run,
    }) as Tool;
  return new ToolRegistry([
    tool('web_search', async (a) => {
      calls.push(`search:${String(a.max_results)}`);
      return { output: { results: [{ title: 'A', url: 'https://a.test/', snippet: 'a' }] }, text: 'A' };
    }),
    tool('web_fetch', async (a) => {
      calls.push(`fetch:${String(a.url)}`);
      return { output: { url: a.url, title: `T ${String(a.url)}`, content: `text of ${String(a.url)}` }, text: 'page' };
    }),
  ]);
}

describe('SourceRecorder', () => {
  it('records hits in step order, reads them back on replay without calling tools, applies the preset', async () => {
    const journal = new Map<string, unknown>();
    const calls: string[] = [];
    const reg = registry(calls);
    const rec = new SourceRecorder({ searchResults: 3, fetchDepth: 2 }, 'quick');
    const ctx = rec.context(journaled(journal));
    const tools = rec.tools(reg);
    const run = (step: string, name: string, args: Record<string, unknown>) =>
      ctx.step(step, async () => ({ content: 'x', exec: (await tools.execute(name, args)).error }));
    // Finished out of order: the recorder sorts by step.
    await run('r-turn-2-tool-1', 'web_fetch', { url: 'https://b.test/' });
    await run('r-turn-1-tool-1', 'web_search', { query: 'q', max_results: 10 });
    await run('r-turn-2-tool-2', 'web_fetch', { url: 'https://c.test/' });
    const refused = await run('r-turn-3-tool-1', 'web_fetch', { url: 'https://d.test/' });
    expect(refused.exec).toMatch(/has read its 2 pages \(the fetch depth of the quick strategy\)/);
    expect(calls).toEqual(['fetch:https://b.test/', 'search:3', 'fetch:https://c.test/']);
    expect(rec.hits().map((h) => h.url)).toEqual(['https://a.test/', 'https://b.test/', 'https://c.test/']);
    expect(rec.pagesRead()).toBe(2);

    const again = new SourceRecorder({ searchResults: 3, fetchDepth: 2 }, 'quick');
    const replay = again.context(journaled(journal));
    for (const step of ['r-turn-1-tool-1', 'r-turn-2-tool-1', 'r-turn-2-tool-2', 'r-turn-3-tool-1'])
      await replay.step(step, async () => ({ content: 'never run' }));
    expect(calls).toHaveLength(3);
    expect(again.hits()).toEqual(rec.hits());
  });
});
