/**
 * The deep-research workflow (research_strategy / context.force_research): the question is
 * broken into sub-questions; research agents (the research tools, citing their sources)
 * answer them in parallel (max_concurrent_agents at a time); with iterative research a
 * coordinator checks coverage after each round and the gaps become the next round's
 * sub-questions, up to the strategy's rounds; a synthesizer writes the cited report (the
 * answer); with enable_fact_extraction, facts with their sources go into metadata.
 */
import { modelTurn, runAgentLoop, runLimited, type AgentOutput } from '../agents/index.js';
import type { TaskStart } from '../tasks/index.js';
import { asOutput } from './usage.js';
import type { Workflow } from './workflow.js';

/** Sub-questions per round by research strategy. */
const RESEARCH_QUESTIONS: Readonly<Record<string, number>> = Object.freeze({ quick: 2, standard: 3, deep: 4, academic: 5 });

/** The research agents' tools: the research role's, within what the task's role allows (generalist: all of them). */
function researchToolsOf(roleToolNames: string[], t: TaskStart): string[] {
  const research = ['web_search', 'web_fetch', 'web_subpage_fetch', 'web_crawl'];
  if (t.context.role) return roleToolNames;
  return roleToolNames.filter((n) => research.includes(n));
}

/** A JSON array of strings from a model's answer (the first array in it), or undefined. */
function stringsOf(text: string): string[] | undefined {
  try {
    const m = /\[[\s\S]*\]/.exec(text);
    const v = m ? (JSON.parse(m[0]) as unknown) : undefined;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.trim().length > 0).map((x) => x.trim()) : undefined;
  } catch {
    return undefined;
  }
}

export const research: Workflow = async (ctx, p) => {
  const { t, agent, base } = p;
  const opts = t.research!;
  const researchTools = researchToolsOf(p.tools, t);
  const perRound = RESEARCH_QUESTIONS[opts.strategy] ?? 3;
  const rounds = opts.iterative ? opts.maxIterations : 1;
  const outs: AgentOutput[] = [];
  const plan = await modelTurn(
    ctx,
    agent,
    { ...base, agentId: 'research-planner' },
    'research-plan',
    [
      {
        role: 'system',
        content: `Break the research question into at most ${perRound} focused sub-questions that together answer it. Respond with a JSON array of strings.`,
      },
      ...p.past,
      p.user,
    ],
    undefined,
    { announce: true, emitOutput: false },
  );
  outs.push(asOutput('research-planner', 'research-plan', plan));
  let questions = (stringsOf(plan.text) ?? [t.query]).slice(0, perRound);
  const findings: { question: string; answer: string; round: number }[] = [];
  const coverage: { round: number; complete: boolean; gaps: string[] }[] = [];
  const parallel = t.max_concurrent_agents ?? perRound;
  let agents = 0;
  let roundsRun = 0;
  for (let round = 1; round <= rounds && questions.length; round++) {
    roundsRun = round;
    // A failing researcher stops the others of its round before the failure propagates.
    const answers = await runLimited(ctx, questions, parallel, (sc, q, i) => {
      const agentId = `researcher-${round}-${i + 1}`;
      return runAgentLoop(sc, agent, {
        ...base,
        agentId,
        stepPrefix: `research-${round}-${i + 1}`,
        tools: researchTools,
        messages: [
          {
            role: 'system',
            content:
              'You are a research agent. Find reliable sources for your sub-question with the tools you have (search, then read the pages), ' +
              'and answer it with the facts you found, citing each source by its URL. Say plainly what you could not find.',
          },
          { role: 'user', content: `Research question: ${t.query}\n\nYour sub-question: ${q}` },
        ],
        onStart: () => ctx.emit('PROGRESS', agentId, `Researching: ${q}`, { stage: 'research', round, question: q }),
      });
    });
    agents += answers.length;
    outs.push(...answers);
    answers.forEach((a, i) => findings.push({ question: questions[i]!, answer: a.text, round }));
    if (round === rounds) break;
    const check = await modelTurn(
      ctx,
      agent,
      { ...base, agentId: 'research-coordinator' },
      `research-coverage-${round}`,
      [
        {
          role: 'system',
          content: `You check research coverage. Given the question and the findings so far, respond with JSON: {"complete": true|false, "gaps": [at most ${perRound} sub-questions still unanswered]}.`,
        },
        { role: 'user', content: `Question: ${t.query}\n\nFindings:\n${findings.map((f) => `- ${f.question}: ${f.answer}`).join('\n')}` },
      ],
      undefined,
      { announce: true, emitOutput: false },
    );
    outs.push(asOutput('research-coordinator', `research-coverage-${round}`, check));
    let complete = true;
    let gaps: string[] = [];
    try {
      const m = /\{[\s\S]*\}/.exec(check.text);
      const v = m ? (JSON.parse(m[0]) as { complete?: unknown; gaps?: unknown }) : undefined;
      complete = v?.complete !== false;
      gaps = Array.isArray(v?.gaps) ? v.gaps.filter((g): g is string => typeof g === 'string' && g.trim().length > 0).slice(0, perRound) : [];
    } catch {
      /* not JSON: treated as complete */
    }
    coverage.push({ round, complete, gaps });
    if (complete || !gaps.length) break;
    questions = gaps;
  }
  const report = await modelTurn(
    ctx,
    agent,
    { ...base, agentId: 'synthesizer', finalAnswer: true },
    'research-synthesis',
    [
      p.sys,
      ...p.past,
      {
        role: 'user',
        content:
          `Write a research report that answers: ${t.query}\n` +
          `${opts.strategy === 'academic' ? 'Use an academic register and a references section. ' : ''}Cite the sources the findings name, by URL; do not add sources that are not in them.\n\n` +
          findings.map((f, i) => `[${i + 1}] ${f.question}\n${f.answer}`).join('\n\n'),
      },
    ],
    undefined,
    { announce: true },
  );
  outs.push(asOutput('synthesizer', 'research-synthesis', report));
  let facts: unknown[] | undefined;
  if (opts.factExtraction) {
    const f = await modelTurn(
      ctx,
      agent,
      { ...base, agentId: 'fact-extractor' },
      'research-facts',
      [
        { role: 'system', content: 'Extract the factual claims of the report as a JSON array of {"fact": "...", "source": "<URL or null>"}.' },
        { role: 'user', content: report.text },
      ],
      undefined,
      { announce: true, emitOutput: false },
    );
    outs.push(asOutput('fact-extractor', 'research-facts', f));
    try {
      const m = /\[[\s\S]*\]/.exec(f.text);
      const v = m ? (JSON.parse(m[0]) as unknown) : undefined;
      facts = Array.isArray(v) ? v : [];
    } catch {
      facts = [];
    }
  }
  return {
    final: report,
    outputs: outs,
    agentsUsed: agents,
    metadata: {
      research: {
        strategy: opts.strategy,
        rounds: roundsRun,
        max_rounds: rounds,
        questions: findings.map((f) => ({ round: f.round, question: f.question })),
        coverage,
        ...(facts ? { facts } : {}),
      },
    },
  };
};
