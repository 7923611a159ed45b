/**
 * The deep-research workflow (research_strategy / context.force_research), one call per stage:
 * a first search of the question (no working search backend: the task fails here), the plan
 * (sub-questions; with plan review, those of the plan a person approved), the research rounds
 * (agents searching and reading, a coverage check between rounds), the sources they read (the
 * first search results read by the workflow when the agents read none), the report citing
 * them with its citations renumbered, and, when asked, verification of its claims and
 * extraction of its facts.
 *
 * Only what this task's web_search calls returned and its page reads fetched can be cited;
 * metadata.citations[n-1] is the source of every `[n]` of the answer.
 */
import type { AgentOutput } from '../agents/index.js';
import { extractFacts } from './research-facts.js';
import { planResearch } from './research-plan.js';
import { researchSettingsOf } from './research-presets.js';
import { researchRounds } from './research-rounds.js';
import { firstSearch, readWhenNothingRead, researchToolsOf } from './research-search.js';
import { citationOf, sourcesToCite } from './research-sources.js';
import { MAX_LISTED_SOURCES, synthesise } from './research-synthesis.js';
import { verifyResearch } from './research-verify.js';
import { reviewPlan } from './review-wait.js';
import type { Workflow } from './workflow.js';

export const research: Workflow = async (ctx, p) => {
  const s = researchSettingsOf(p.t);
  const tools = researchToolsOf(p);
  const search = await firstSearch(ctx, p, s);
  const plan = await reviewPlan(ctx, p, await planResearch(ctx, p));
  const rounds = await researchRounds(ctx, p, s, plan.questions, tools);
  const read = await readWhenNothingRead(ctx, p, s, tools, [...search.hits, ...rounds.hits]);
  const listed = sourcesToCite(read, MAX_LISTED_SOURCES);
  const answer = await synthesise(ctx, p, s, rounds.findings, listed);
  const cited = answer.cited.map((n) => listed[n - 1]!);
  const verified = s.verification ? await verifyResearch(ctx, p, answer.text, cited) : undefined;
  const facts = s.factExtraction ? await extractFacts(ctx, p, answer.text, cited) : undefined;
  const outputs: AgentOutput[] = [
    search.out,
    plan.output,
    ...rounds.outputs,
    answer.out,
    ...(verified?.out ? [verified.out] : []),
    ...(facts ? [facts.out] : []),
  ];
  return {
    final: { text: answer.text, model: answer.model, provider: answer.provider },
    outputs,
    agentsUsed: rounds.agents,
    metadata: {
      research: {
        strategy: s.strategy,
        rounds: rounds.roundsRun,
        max_rounds: s.maxRounds,
        questions: rounds.findings.map((f) => ({ round: f.round, question: f.question })),
        coverage: rounds.coverage,
        sources_found: listed.length,
        pages_read: listed.filter((x) => x.fetched).length,
      },
      citations: cited.map(citationOf),
      ...(verified ? { verification: verified.verification } : {}),
      ...(facts ? { extracted_facts: facts.facts, fact_summary: facts.summary } : {}),
      ...(plan.review ? { review: plan.review } : {}),
    },
  };
};
