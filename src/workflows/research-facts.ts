/**
 * Fact extraction (enable_fact_extraction): a model lists the answer's facts with the
 * citations they rest on; each is kept in the spec's shape with its citations checked (a
 * number naming no citation is dropped). A fact no cited source supports (research-verify.ts's
 * lexical rule) keeps at most LOW_CONFIDENCE. fact_summary counts them: high_confidence is
 * confidence >= HIGH_CONFIDENCE; contradiction_count is the contradictions the model named.
 */
import { modelTurn, type AgentOutput } from '../agents/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import type { Source } from './research-sources.js';
import { readTextOf, supportOf } from './research-verify.js';
import { asOutput } from './usage.js';
import type { Prepared } from './workflow.js';

export const HIGH_CONFIDENCE = 0.8;
export const LOW_CONFIDENCE = 0.3;
const CATEGORIES = ['definition', 'statistic', 'event', 'claim', 'process', 'comparison', 'general'];

export interface ExtractedFact {
  statement: string;
  confidence: number;
  source_citation: number[];
  category: string;
  entity_mentions: string[];
  temporal_marker: string | null;
  is_quantitative: boolean;
}

export interface FactSummary {
  total_facts: number;
  high_confidence: number;
  categorized_facts: Record<string, number>;
  contradiction_count: number;
}

const round2 = (n: number) => Math.round(Math.min(1, Math.max(0, n)) * 100) / 100;

/** The facts of a model's answer (`{"facts": [...], "contradictions": [...]}` or a bare array). */
export function factsOf(text: string, citations: Source[]): { facts: ExtractedFact[]; summary: FactSummary } {
  let v: unknown;
  try {
    const obj = /\{[\s\S]*\}/.exec(text);
    const arr = /\[[\s\S]*\]/.exec(text);
    v = obj && (!arr || obj.index < arr.index) ? JSON.parse(obj[0]) : arr ? JSON.parse(arr[0]) : undefined;
  } catch {
    v = undefined;
  }
  const o = (v && typeof v === 'object' && !Array.isArray(v) ? v : { facts: v }) as { facts?: unknown; contradictions?: unknown };
  const facts: ExtractedFact[] = [];
  for (const x of Array.isArray(o.facts) ? o.facts : []) {
    const f = (x ?? {}) as Record<string, unknown>;
    const statement = typeof f.statement === 'string' ? f.statement.trim() : typeof f.fact === 'string' ? f.fact.trim() : '';
    if (!statement) continue;
    const cites = (Array.isArray(f.source_citation) ? f.source_citation : [f.source_citation])
      .map(Number)
      .filter((n, i, a) => Number.isInteger(n) && n >= 1 && n <= citations.length && a.indexOf(n) === i);
    const given = typeof f.confidence === 'number' && Number.isFinite(f.confidence) ? f.confidence : 0.5;
    const supported = cites.some((n) => supportOf(statement, readTextOf(citations[n - 1]!)).supported);
    const category = typeof f.category === 'string' && CATEGORIES.includes(f.category.trim().toLowerCase()) ? f.category.trim().toLowerCase() : 'general';
    facts.push({
      statement,
      confidence: round2(supported ? given : Math.min(given, LOW_CONFIDENCE)),
      source_citation: cites,
      category,
      entity_mentions: Array.isArray(f.entity_mentions)
        ? [...new Set(f.entity_mentions.filter((e): e is string => typeof e === 'string' && !!e.trim()).map((e) => e.trim()))]
        : [],
      temporal_marker: typeof f.temporal_marker === 'string' && f.temporal_marker.trim() ? f.temporal_marker.trim() : null,
      is_quantitative: typeof f.is_quantitative === 'boolean' ? f.is_quantitative : /\d/.test(statement),
    });
  }
  const categorized: Record<string, number> = {};
  for (const f of facts) categorized[f.category] = (categorized[f.category] ?? 0) + 1;
  return {
    facts,
    summary: {
      total_facts: facts.length,
      high_confidence: facts.filter((f) => f.confidence >= HIGH_CONFIDENCE).length,
      categorized_facts: categorized,
      contradiction_count: Array.isArray(o.contradictions) ? o.contradictions.length : 0,
    },
  };
}

export async function extractFacts(
  ctx: WorkflowContext,
  p: Prepared,
  answer: string,
  citations: Source[],
): Promise<{ facts: ExtractedFact[]; summary: FactSummary; out: AgentOutput }> {
  const turn = await modelTurn(
    ctx,
    p.agent,
    { ...p.base, agentId: 'fact-extractor' },
    'research-facts',
    [
      {
        role: 'system',
        content:
          'Extract the facts of the report. Respond with JSON: {"facts": [{"statement": "...", "confidence": 0.0-1.0, "source_citation": [citation numbers of the report], ' +
          `"category": one of ${CATEGORIES.map((c) => `"${c}"`).join(', ')}, "entity_mentions": ["..."], "temporal_marker": "a date or period, or null", "is_quantitative": true|false}], ` +
          '"contradictions": [{"statement": "...", "citations": [numbers]}]}. Use only the citation numbers the report uses.',
      },
      {
        role: 'user',
        content: `Report:\n${answer}\n\nCitations:\n${citations.map((s, i) => `[${i + 1}] ${s.title || s.url} (${s.url})`).join('\n')}`,
      },
    ],
    undefined,
    { announce: true, emitOutput: false },
  );
  return { ...factsOf(turn.text, citations), out: asOutput('fact-extractor', 'research-facts', turn) };
}
