/**
 * What the research agents read, recorded where it is read: their tool calls go through a
 * view of the tool registry that keeps the structured result of every web_search and page
 * read, and the agent's context adds those results to the tool step's journal entry. A replay
 * after a crash therefore reads the sources back from the journal with the step's answer,
 * without calling any tool again, and the order of the sources is the order of the steps,
 * whatever order parallel calls finished in.
 *
 * The view also applies the strategy's preset to the calls (research-presets.ts): a search
 * returns at most `searchResults` results, and one agent reads at most `fetchDepth` pages;
 * past that, a page read is refused and the model is told why.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AgentContext } from '../agents/index.js';
import type { ExecuteOptions, ToolExecution, ToolRegistry } from '../tools/index.js';
import { hitsOf, type SourceHit } from './research-sources.js';

/** The key under which a tool step's journal entry keeps what the call read. */
const SOURCES_KEY = 'research_sources';
const PAGE_TOOLS = new Set(['web_fetch', 'web_subpage_fetch', 'web_crawl']);

const bucket = new AsyncLocalStorage<SourceHit[]>();

/** Journal order of a step name: the numbers in it, compared one by one. */
function stepOrder(a: string, b: string): number {
  const na = (a.match(/\d+/g) ?? []).map(Number);
  const nb = (b.match(/\d+/g) ?? []).map(Number);
  for (let i = 0; i < Math.max(na.length, nb.length); i++) {
    const d = (na[i] ?? -1) - (nb[i] ?? -1);
    if (d) return d;
  }
  return a.localeCompare(b);
}

const refusal = (tool: string, error: string): ToolExecution => ({
  tool,
  success: false,
  output: {},
  text: '',
  error,
  errorKind: 'limit',
  metadata: { tool },
  executionTimeMs: 0,
  costUsd: 0,
  tokens: 0,
});

/** The sources one research agent read, and the context and tools that record them. */
export class SourceRecorder {
  private readonly byStep = new Map<string, SourceHit[]>();
  /** Pages of calls still running (counted against the fetch depth before they finish). */
  private reserved = 0;

  constructor(
    private readonly preset: { searchResults: number; fetchDepth: number },
    private readonly strategy: string,
  ) {}

  /** Every hit so far, in the order of the steps that read them. */
  hits(): SourceHit[] {
    return [...this.byStep.keys()].sort(stepOrder).flatMap((k) => this.byStep.get(k)!);
  }

  pagesRead(): number {
    return [...this.byStep.values()].reduce((n, hs) => n + hs.filter((h) => h.fetched).length, 0);
  }

  /** `parent` with every step's reads added to (and read back from) its journal entry. */
  context(parent: AgentContext): AgentContext {
    return {
      step: async <T>(name: string, fn: () => Promise<T>, o?: { stored?: boolean }): Promise<T> => {
        const r = await parent.step(
          name,
          async () => {
            const hits: SourceHit[] = [];
            const out = await bucket.run(hits, fn);
            return hits.length && out && typeof out === 'object' ? ({ ...out, [SOURCES_KEY]: hits } as T) : out;
          },
          o,
        );
        const hits = r && typeof r === 'object' ? (r as Record<string, unknown>)[SOURCES_KEY] : undefined;
        if (Array.isArray(hits)) this.byStep.set(name, hits as SourceHit[]);
        return r;
      },
      isRecorded: (name) => parent.isRecorded(name),
      emit: (type, agentId, message, payload) => parent.emit(type, agentId, message, payload),
      checkpoint: () => parent.checkpoint(),
      get signal() {
        return parent.signal;
      },
    };
  }

  /** `registry` with the preset applied to the web tools and their results recorded. */
  tools(registry: ToolRegistry): ToolRegistry {
    const view = Object.create(registry) as ToolRegistry;
    view.execute = async (name: string, args: unknown, o?: ExecuteOptions): Promise<ToolExecution> => {
      const a = args && typeof args === 'object' && !Array.isArray(args) ? { ...(args as Record<string, unknown>) } : args;
      let pages = 0;
      if (a && typeof a === 'object') {
        const rec = a as Record<string, unknown>;
        if (name === 'web_search') rec.max_results = Math.min(Number(rec.max_results) || this.preset.searchResults, this.preset.searchResults);
        if (PAGE_TOOLS.has(name)) {
          const left = this.preset.fetchDepth - this.pagesRead() - this.reserved;
          if (left <= 0) {
            return refusal(
              name,
              `this research agent has read its ${this.preset.fetchDepth} pages (the fetch depth of the ${this.strategy} strategy); answer with what you have read`,
            );
          }
          if (name === 'web_subpage_fetch') rec.limit = Math.min(Number(rec.limit) || left, left);
          if (name === 'web_crawl') rec.max_pages = Math.min(Number(rec.max_pages) || left, left);
          pages = name === 'web_fetch' ? 1 : left;
        }
      }
      this.reserved += pages;
      let exec: ToolExecution;
      try {
        exec = await registry.execute(name, a, o);
      } finally {
        this.reserved -= pages;
      }
      if (exec.success) bucket.getStore()?.push(...hitsOf(name, exec.output));
      return exec;
    };
    return view;
  }
}
