/**
 * The report: a synthesiser writes it from the research agents' findings and the numbered
 * list of the pages the task read, citing that list with inline `[n]` markers. Its text is
 * the answer once the markers are renumbered (research-citations.ts). Search results nobody
 * fetched are shown too, unnumbered, as context: they cannot be cited, and a marker naming
 * anything but a listed page is removed.
 *
 * The answer's events carry the renumbered text: the synthesiser's own stream is held back
 * (its text is not the answer yet), and the answer is emitted, marked `final_answer`, in the
 * same journaled step once renumbered. So what a client streamed is the task's result, and its
 * markers are the ones metadata.citations resolves; the price is that the report arrives in
 * one burst instead of word by word.
 */
import { modelTurn, type AgentContext, type AgentOutput, type Turn } from '../agents/index.js';
import type { ChatMessage } from '../llm/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import { renumberCitations, type Renumbered } from './research-citations.js';
import type { ResearchSettings } from './research-presets.js';
import type { Finding } from './research-rounds.js';
import { citableOf, type Source } from './research-sources.js';
import { asOutput } from './usage.js';
import type { Prepared } from './workflow.js';

/** Sources the synthesiser is shown at most (pages read first). */
export const MAX_LISTED_SOURCES = 20;
/** Characters of each source shown to the synthesiser. */
const EXCERPT = 1000;

const excerpt = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, EXCERPT);

/** The numbered list of the pages read, the only sources the synthesiser may cite. */
export function sourceList(citable: Source[]): string {
  return citable.map((s, i) => `[${i + 1}] ${s.title || s.url}\nURL: ${s.url}\nRead: ${excerpt(s.text)}`).join('\n\n');
}

/** The search results nobody read, unnumbered so that nothing invites a citation of them. */
export function contextList(sources: Source[]): string {
  return sources.map((s) => `- ${s.title || s.url} (${s.url}): ${excerpt(s.snippet)}`).join('\n');
}

export async function synthesise(
  ctx: WorkflowContext,
  p: Prepared,
  s: ResearchSettings,
  findings: Finding[],
  listed: Source[],
): Promise<Renumbered & { model: string; provider: string; out: AgentOutput }> {
  const step = 'research-synthesis';
  const citable = citableOf(listed);
  const replayed = ctx.isRecorded(step);
  const { turn, answer } = await ctx.step(step, async () => {
    const turn = await modelTurn(
      withoutText(ctx),
      p.agent,
      { ...p.base, agentId: 'synthesizer' },
      step,
      messagesOf(
        p,
        s,
        findings,
        citable,
        listed.filter((x) => !citable.includes(x)),
      ),
      undefined,
      {
        announce: true,
        emitOutput: false,
        inStep: true,
      },
    );
    const numbered = renumberCitations(turn.text, citable.length);
    // The synthesiser numbered the citable pages; the caller knows the listing's numbers.
    const answer = { ...numbered, cited: numbered.cited.map((n) => listed.indexOf(citable[n - 1]!) + 1) };
    emitAnswer(ctx, p.agent.partialChunkChars, turn, answer.text);
    return { turn, answer };
  });
  // A replayed call counts against this run's budgets too (as modelTurn does for its own steps).
  if (replayed) p.budget?.afterCall(undefined, 'synthesizer', turn.usage);
  return { ...answer, model: turn.model, provider: turn.provider, out: asOutput('synthesizer', step, turn) };
}

/** `ctx` without the model's text events: the synthesiser's raw text is not the answer. */
function withoutText(ctx: WorkflowContext): AgentContext {
  return {
    step: (name, fn, o) => ctx.step(name, fn, o),
    isRecorded: (name) => ctx.isRecorded(name),
    emit: (type, agentId, message, payload) => (type === 'LLM_PARTIAL' || type === 'LLM_OUTPUT' ? undefined : ctx.emit(type, agentId, message, payload)),
    checkpoint: () => ctx.checkpoint(),
    get signal() {
      return ctx.signal;
    },
  };
}

/** The answer as the synthesiser's final-answer events: LLM_PARTIAL pieces, then LLM_OUTPUT. */
function emitAnswer(ctx: WorkflowContext, chunk: number, turn: Turn, text: string): void {
  const size = Math.max(1, chunk);
  for (let i = 0; i < text.length;) {
    // A piece never ends between the two halves of a surrogate pair.
    const end = Math.min(text.length, i + size + (/[\uD800-\uDBFF]/.test(text[i + size - 1] ?? '') ? 1 : 0));
    const piece = text.slice(i, end);
    ctx.emit('LLM_PARTIAL', 'synthesizer', piece, { delta: piece, final_answer: true });
    i = end;
  }
  const u = turn.usage;
  ctx.emit('LLM_OUTPUT', 'synthesizer', text, {
    model: turn.model,
    provider: turn.provider,
    usage: { input_tokens: u.inputTokens, output_tokens: u.outputTokens, total_tokens: u.totalTokens, cost_usd: u.costUsd },
    ...(turn.cacheHit ? { cache_hit: true, cache_score: turn.cacheScore ?? 1 } : {}),
    final_answer: true,
  });
}

function messagesOf(p: Prepared, s: ResearchSettings, findings: Finding[], citable: Source[], unread: Source[]): ChatMessage[] {
  return [
    p.sys,
    ...p.past,
    {
      role: 'user',
      content:
        `Write a research report that answers: ${p.t.query}\n` +
        `${s.strategy === 'academic' ? 'Use an academic register. ' : ''}` +
        'Cite the numbered sources below with inline markers such as [1] or [2, 3] right after each statement they support. ' +
        'Cite only these sources and only for what they say; do not add a list of sources or URLs (one is attached to the report).\n\n' +
        `Sources:\n${sourceList(citable)}\n\n` +
        (unread.length ? `Search results that were not read (context only: never cite them):\n${contextList(unread)}\n\n` : '') +
        `Findings of the research agents:\n${findings.map((f) => `### ${f.question}\n${f.answer}`).join('\n\n')}`,
    },
  ];
}
