/**
 * The report: a synthesiser writes it from the research agents' findings and the numbered
 * list of the sources the task read, citing that list with inline `[n]` markers. Its text is
 * the answer once the markers are renumbered (research-citations.ts).
 */
import { modelTurn, type AgentOutput } from '../agents/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import type { ResearchSettings } from './research-presets.js';
import type { Finding } from './research-rounds.js';
import type { Source } from './research-sources.js';
import { asOutput } from './usage.js';
import type { Prepared } from './workflow.js';

/** Sources the synthesiser is shown at most (pages read first). */
export const MAX_LISTED_SOURCES = 30;
/** Characters of each source shown to the synthesiser. */
const EXCERPT = 1500;

export function sourceList(sources: Source[]): string {
  return sources
    .map((s, i) => {
      const body = (s.fetched ? s.text : s.snippet).replace(/\s+/g, ' ').trim().slice(0, EXCERPT);
      return `[${i + 1}] ${s.title || s.url}\nURL: ${s.url}\n${s.fetched ? 'Read' : 'Search result only'}: ${body}`;
    })
    .join('\n\n');
}

export async function synthesise(
  ctx: WorkflowContext,
  p: Prepared,
  s: ResearchSettings,
  findings: Finding[],
  listed: Source[],
): Promise<{ text: string; model: string; provider: string; out: AgentOutput }> {
  const report = await modelTurn(
    ctx,
    p.agent,
    { ...p.base, agentId: 'synthesizer', finalAnswer: true },
    'research-synthesis',
    [
      p.sys,
      ...p.past,
      {
        role: 'user',
        content:
          `Write a research report that answers: ${p.t.query}\n` +
          `${s.strategy === 'academic' ? 'Use an academic register. ' : ''}` +
          'Cite the numbered sources below with inline markers such as [1] or [2, 3] right after each statement they support. ' +
          'Cite only these sources and only for what they say; do not add a list of sources or URLs (one is attached to the report).\n\n' +
          `Sources:\n${sourceList(listed)}\n\n` +
          `Findings of the research agents:\n${findings.map((f) => `### ${f.question}\n${f.answer}`).join('\n\n')}`,
      },
    ],
    undefined,
    { announce: true },
  );
  return { text: report.text, model: report.model, provider: report.provider, out: asOutput('synthesizer', 'research-synthesis', report) };
}
