/**
 * The research strategies' presets, in one place: how many sub-questions a round researches,
 * how many rounds the coverage loop may run, how many results one search returns (sources per
 * iteration) and how many pages one research agent reads in full (fetch depth).
 *
 * The rounds are the default of `iterative_max_iterations`, which submission resolves (a unit
 * test keeps tasks' RESEARCH_ROUNDS equal to these); the other numbers are applied here, to the
 * research agents' tool calls (research-capture.ts), not merely suggested to the model.
 */
import type { TaskStart } from '../tasks/index.js';

export interface ResearchPreset {
  /** Sub-questions researched in parallel in one round. */
  questionsPerRound: number;
  /** Rounds of the coverage loop when the task does not set iterative_max_iterations. */
  rounds: number;
  /** Results one web_search returns at most (sources per iteration). */
  searchResults: number;
  /** Pages one research agent reads in full at most (web_fetch, and each page of a subpage fetch or crawl). */
  fetchDepth: number;
}

export const RESEARCH_PRESETS: Readonly<Record<'quick' | 'standard' | 'deep' | 'academic', Readonly<ResearchPreset>>> = Object.freeze({
  quick: Object.freeze({ questionsPerRound: 2, rounds: 1, searchResults: 3, fetchDepth: 2 }),
  standard: Object.freeze({ questionsPerRound: 3, rounds: 2, searchResults: 5, fetchDepth: 3 }),
  deep: Object.freeze({ questionsPerRound: 4, rounds: 3, searchResults: 8, fetchDepth: 5 }),
  academic: Object.freeze({ questionsPerRound: 5, rounds: 3, searchResults: 10, fetchDepth: 6 }),
});

/** What one research task runs with: its strategy's preset and the rounds it may take. */
export interface ResearchSettings extends ResearchPreset {
  strategy: string;
  /** Rounds this task may run: 1 without iterative research, else iterative_max_iterations (1-5). */
  maxRounds: number;
  factExtraction: boolean;
  verification: boolean;
}

export function researchSettingsOf(t: TaskStart): ResearchSettings {
  const opts = t.research ?? { strategy: 'standard', maxIterations: RESEARCH_PRESETS.standard.rounds, iterative: true, factExtraction: false };
  const preset = Object.hasOwn(RESEARCH_PRESETS, opts.strategy) ? RESEARCH_PRESETS[opts.strategy as keyof typeof RESEARCH_PRESETS] : RESEARCH_PRESETS.standard;
  const rounds = Math.min(5, Math.max(1, Math.trunc(opts.maxIterations) || preset.rounds));
  return {
    ...preset,
    strategy: opts.strategy,
    maxRounds: opts.iterative ? rounds : 1,
    factExtraction: opts.factExtraction,
    verification: !!t.enable_verification,
  };
}
