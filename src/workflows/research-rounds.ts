/**
 * The research rounds: one research agent per sub-question (max_concurrent_agents at a time),
 * each searching and reading with the web tools through its own SourceRecorder; with
 * iterative research a coordinator checks coverage after each round and the gaps become the
 * next round's sub-questions, up to the task's rounds.
 */
import { modelTurn, runAgentLoop, runLimited, type AgentOutput } from '../agents/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import { SourceRecorder } from './research-capture.js';
import type { ResearchSettings } from './research-presets.js';
import type { SourceHit } from './research-sources.js';
import { asOutput } from './usage.js';
import type { Prepared } from './workflow.js';

export interface Finding {
  round: number;
  question: string;
  answer: string;
}

export interface Rounds {
  findings: Finding[];
  coverage: { round: number; complete: boolean; gaps: string[] }[];
  roundsRun: number;
  /** What the agents read, in order: round, then sub-question, then step. */
  hits: SourceHit[];
  outputs: AgentOutput[];
  agents: number;
}

const RESEARCHER =
  'You are a research agent. Find reliable sources for your sub-question with the tools you have: search, then read the most relevant pages. ' +
  'Answer it only with facts from the pages you read, naming the URL of the page each fact comes from. Say plainly what you could not find.';

function coverageOf(text: string, max: number): { complete: boolean; gaps: string[] } {
  try {
    const m = /\{[\s\S]*\}/.exec(text);
    const v = m ? (JSON.parse(m[0]) as { complete?: unknown; gaps?: unknown }) : undefined;
    const gaps = Array.isArray(v?.gaps) ? v.gaps.filter((g): g is string => typeof g === 'string' && g.trim().length > 0).slice(0, max) : [];
    return { complete: v?.complete !== false, gaps };
  } catch {
    return { complete: true, gaps: [] }; // not JSON: treated as complete
  }
}

export async function researchRounds(ctx: WorkflowContext, p: Prepared, s: ResearchSettings, first: string[], tools: string[]): Promise<Rounds> {
  const r: Rounds = { findings: [], coverage: [], roundsRun: 0, hits: [], outputs: [], agents: 0 };
  const parallel = p.t.max_concurrent_agents ?? s.questionsPerRound;
  let questions = first;
  for (let round = 1; round <= s.maxRounds && questions.length; round++) {
    r.roundsRun = round;
    const recorders = questions.map(() => new SourceRecorder(s, s.strategy));
    // A failing researcher stops the others of its round before the failure propagates.
    const answers = await runLimited(ctx, questions, parallel, (sc, q, i) => {
      const agentId = `researcher-${round}-${i + 1}`;
      const rec = recorders[i]!;
      return runAgentLoop(
        rec.context(sc),
        { ...p.agent, tools: p.deps.tools ? rec.tools(p.deps.tools) : undefined },
        {
          ...p.base,
          agentId,
          stepPrefix: `research-${round}-${i + 1}`,
          tools,
          messages: [
            { role: 'system', content: RESEARCHER },
            {
              role: 'user',
              content: `Research question: ${p.t.query}\n\nYour sub-question: ${q}\n\nRead at most ${s.fetchDepth} pages; a search returns at most ${s.searchResults} results.`,
            },
          ],
          onStart: () => ctx.emit('PROGRESS', agentId, `Researching: ${q}`, { stage: 'research', round, question: q }),
        },
      );
    });
    r.agents += answers.length;
    r.outputs.push(...answers);
    answers.forEach((a, i) => r.findings.push({ question: questions[i]!, answer: a.text, round }));
    for (const rec of recorders) r.hits.push(...rec.hits());
    if (round === s.maxRounds) break;
    const check = await modelTurn(
      ctx,
      p.agent,
      { ...p.base, agentId: 'research-coordinator' },
      `research-coverage-${round}`,
      [
        {
          role: 'system',
          content: `You check research coverage. Given the question and the findings so far, respond with JSON: {"complete": true|false, "gaps": [at most ${s.questionsPerRound} sub-questions still unanswered]}.`,
        },
        { role: 'user', content: `Question: ${p.t.query}\n\nFindings:\n${r.findings.map((f) => `- ${f.question}: ${f.answer}`).join('\n')}` },
      ],
      undefined,
      { announce: true, emitOutput: false },
    );
    r.outputs.push(asOutput('research-coordinator', `research-coverage-${round}`, check));
    const c = coverageOf(check.text, s.questionsPerRound);
    r.coverage.push({ round, ...c });
    if (c.complete || !c.gaps.length) break;
    questions = c.gaps;
  }
  return r;
}
