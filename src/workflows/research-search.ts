/**
 * The research workflow's first step: its tools, and one search of the question itself. The
 * search proves there is a working search backend before any model is paid for (no backend
 * configured, or one that fails, ends the task at once with the tool's own words, which name
 * the setting), and its results are the task's first sources.
 */
import type { AgentOutput, ToolApproval } from '../agents/index.js';
import { AppError, Code } from '../kernel/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import type { ResearchSettings } from './research-presets.js';
import { hitsOf, type SourceHit } from './research-sources.js';
import type { Prepared } from './workflow.js';

const RESEARCH_TOOLS = ['web_search', 'web_fetch', 'web_subpage_fetch', 'web_crawl'];

/** The research agents' tools: the research tools (a task naming a role: that role's tools); web_search among them. */
export function researchToolsOf(p: Prepared): string[] {
  const tools = p.t.context.role ? p.tools : p.tools.filter((n) => RESEARCH_TOOLS.includes(n));
  if (!tools.includes('web_search') || !p.deps.tools?.get('web_search')) {
    throw new AppError(Code.FailedPrecondition, `the research workflow needs the web_search tool, which role ${p.role.name} does not allow`);
  }
  return tools;
}

/**
 * The tool policies hold the workflow's own calls as they hold the agents': asked before the
 * step that makes the call (a wait passivates the workflow, so it cannot sit inside a step),
 * and not again once that step is recorded (`done`).
 */
async function approval(
  ctx: WorkflowContext,
  p: Prepared,
  done: string,
  tool: string,
  args: Record<string, unknown>,
  step: string,
): Promise<ToolApproval | undefined> {
  if (!p.agent.approveTool || ctx.isRecorded(done)) return undefined;
  return p.agent.approveTool({ tool, arguments: args, callId: step, agentId: 'research-search', step });
}

/** Searches the question once (a journaled step); throws when search does not work or a person refused it. */
export async function firstSearch(ctx: WorkflowContext, p: Prepared, s: ResearchSettings): Promise<{ hits: SourceHit[]; out: AgentOutput }> {
  const proposed = { query: p.t.query.slice(0, 1000), max_results: s.searchResults };
  const verdict = await approval(ctx, p, 'research-search', 'web_search', proposed, 'research-search');
  if (verdict && !verdict.approved) {
    throw new AppError(Code.FailedPrecondition, `approval rejected: ${verdict.message} (research needs its first web_search)`);
  }
  const args = verdict?.arguments ?? proposed;
  const hits = await ctx.step('research-search', async () => {
    ctx.emit('PROGRESS', 'research-search', `Searching the web: ${p.t.query}`, { stage: 'search', query: p.t.query });
    const exec = await p.deps.tools!.execute('web_search', args, {
      signal: ctx.signal,
      sessionId: p.base.sessionId,
      userId: p.t.user_id,
      taskId: p.t.task_id,
    });
    if (!exec.success) {
      if (exec.errorKind === 'not_configured') throw new AppError(Code.FailedPrecondition, `research needs a web search backend: ${exec.error}`);
      throw new AppError(Code.Unavailable, `research could not search the web: the search backend failed: ${exec.error}`, { retryable: false });
    }
    const found = hitsOf('web_search', exec.output);
    ctx.emit('PROGRESS', 'research-search', `Found ${found.length} results`, { stage: 'search', results: found.length });
    return found;
  });
  const out: AgentOutput = {
    text: '',
    model: '',
    provider: '',
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 },
    calls: [],
    toolCalls: 1,
  };
  return { hits, out };
}

/**
 * When the research agents read no page at all (a model that answered without its tools),
 * the workflow reads the first search results itself, up to the strategy's fetch depth, so
 * that the report rests on pages rather than on what the model already believed. One journaled
 * step; pages that cannot be read, or whose read a person refused, are skipped.
 */
export async function readWhenNothingRead(ctx: WorkflowContext, p: Prepared, s: ResearchSettings, tools: string[], hits: SourceHit[]): Promise<SourceHit[]> {
  if (hits.some((h) => h.fetched) || !tools.includes('web_fetch')) return hits;
  const urls = [...new Set(hits.map((h) => h.url))].slice(0, s.fetchDepth);
  if (!urls.length) return hits;
  // One question at a time, all before any page is read (as an agent's held calls).
  const reads: Record<string, unknown>[] = [];
  for (const [i, url] of urls.entries()) {
    const verdict = await approval(ctx, p, 'research-read', 'web_fetch', { url }, `research-read-${i}`);
    if (!verdict || verdict.approved) reads.push(verdict?.arguments ?? { url });
  }
  if (!reads.length) return hits;
  const read = await ctx.step('research-read', async () => {
    ctx.emit('PROGRESS', 'research-search', `Reading ${reads.length} search results`, { stage: 'read', urls: reads.map((a) => a.url) });
    const pages = await Promise.all(
      reads.map(async (args) => {
        const exec = await p.deps.tools!.execute('web_fetch', args, {
          signal: ctx.signal,
          sessionId: p.base.sessionId,
          userId: p.t.user_id,
          taskId: p.t.task_id,
        });
        return exec.success ? hitsOf('web_fetch', exec.output) : [];
      }),
    );
    return pages.flat();
  });
  return [...hits, ...read];
}
