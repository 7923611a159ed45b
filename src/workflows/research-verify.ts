/**
 * Verification of a research answer (enable_verification), in the spec's shape. The claims are
 * the answer's sentences that carry citation markers; each is checked against the text the
 * task fetched of its cited pages (never a search snippet or a title met in search results: a
 * source not read supports nothing), by a deterministic lexical rule:
 *
 *   a citation supports a claim when at least SUPPORT_THRESHOLD of the claim's content words
 *   (lower-cased, stop words and words under three letters dropped, plural/-ed/-ing endings
 *   cut) occur in the source's text, and every number of the claim occurs in it.
 *
 * A model step then names conflicts (a cited source that says otherwise); a conflicting
 * citation no longer supports its claim. A claim's confidence: supported, 0.5 + 0.5 × its best
 * coverage; not supported, 0.5 × its best coverage; halved when a citation conflicts.
 * overall_confidence is the mean of the claims' (0 without claims).
 */
import { modelTurn, type AgentOutput } from '../agents/index.js';
import type { WorkflowContext } from '../runtime/index.js';
import { markersOf, splitCode, withoutMarkers } from './research-citations.js';
import type { Source } from './research-sources.js';
import { asOutput } from './usage.js';
import type { Prepared } from './workflow.js';

export const SUPPORT_THRESHOLD = 0.6;

export interface ClaimDetail {
  claim: string;
  supporting_citations: number[];
  conflicting_citations: number[];
  confidence: number;
}

export interface Conflict {
  claim: string;
  citation: number;
  explanation: string;
}

export interface Verification {
  overall_confidence: number;
  total_claims: number;
  supported_claims: number;
  unsupported_claims: string[];
  conflicts: Conflict[];
  claim_details: ClaimDetail[];
}

const STOP = new Set(
  'the and for are but not you all any can had her was one our out has have him his how its may new now old see two way who did get let put say she too use that with this from they will what when where which while there their them then than these those been into more most also such only over some very about after before other under would could should each were your does being because between through during without within upon'.split(
    ' ',
  ),
);

const stem = (w: string) =>
  w.length > 5 && w.endsWith('ing')
    ? w.slice(0, -3)
    : w.length > 4 && w.endsWith('ed')
      ? w.slice(0, -2)
      : w.length > 3 && w.endsWith('s') && !w.endsWith('ss')
        ? w.slice(0, -1)
        : w;

/** The content words of a text, as compared. */
export function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !/^\d+$/.test(w) && w.length >= 3 && !STOP.has(w)).map(stem);
}

const numbersIn = (text: string) => (text.match(/\d+(?:[.,]\d+)*/g) ?? []).map((n) => n.replace(/,(?=\d{3}\b)/g, ''));

/** How much of `claim` the source's text holds: the share of its words found, and whether all its numbers are there. */
export function supportOf(claim: string, sourceText: string): { coverage: number; supported: boolean } {
  const words = [...new Set(wordsOf(claim))];
  const have = new Set(wordsOf(sourceText));
  const coverage = words.length ? words.filter((w) => have.has(w)).length / words.length : 0;
  const nums = new Set(numbersIn(sourceText));
  const numbersOk = numbersIn(claim).every((n) => nums.has(n));
  return { coverage: Math.round(coverage * 100) / 100, supported: words.length > 0 && coverage >= SUPPORT_THRESHOLD && numbersOk };
}

/** What the task read of a source: the fetched page's text; nothing for a page never fetched. */
export const readTextOf = (s: Source) => (s.fetched ? s.text : '');

/** The answer's cited sentences: the claim's text without markers, and the citations it names. */
export function claimsOf(answer: string): { claim: string; cited: number[] }[] {
  const body = splitCode(answer, false)
    .filter((_, i) => i % 2 === 0)
    .join('\n');
  const pieces = body.split(/\n+|(?<=[.!?](?:\s*\[[\d,\s]+\])*)\s+(?=[^\s[])/);
  const out: { claim: string; cited: number[] }[] = [];
  for (const piece of pieces) {
    const cited = markersOf(piece);
    if (!cited.length) continue;
    const claim = withoutMarkers(piece)
      .replace(/^\s*(?:[#>*-]+|\d+[.)])\s*/, '')
      .replace(/\*\*|__/g, '')
      .trim();
    if (wordsOf(claim).length) out.push({ claim, cited });
  }
  return out;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** The lexical check of every claim (conflicts not yet known). */
export function checkClaims(answer: string, citations: Source[]): { claim: string; cited: number[]; coverage: Map<number, number>; supporting: number[] }[] {
  return claimsOf(answer).map(({ claim, cited }) => {
    const coverage = new Map<number, number>();
    const supporting: number[] = [];
    for (const n of cited) {
      const s = citations[n - 1];
      if (!s) continue;
      const r = supportOf(claim, readTextOf(s));
      coverage.set(n, r.coverage);
      if (r.supported) supporting.push(n);
    }
    return { claim, cited, coverage, supporting };
  });
}

/** The verification object from the lexical checks and the conflicts a model named. */
export function verificationOf(checked: ReturnType<typeof checkClaims>, conflicts: Conflict[]): Verification {
  const details: ClaimDetail[] = checked.map((c) => {
    const conflicting = [...new Set(conflicts.filter((x) => x.claim === c.claim).map((x) => x.citation))].sort((a, b) => a - b);
    const supporting = c.supporting.filter((n) => !conflicting.includes(n));
    const best = Math.max(0, ...(supporting.length ? supporting : c.cited).map((n) => c.coverage.get(n) ?? 0));
    let confidence = supporting.length ? 0.5 + 0.5 * best : 0.5 * best;
    if (conflicting.length) confidence /= 2;
    return { claim: c.claim, supporting_citations: supporting, conflicting_citations: conflicting, confidence: round2(confidence) };
  });
  const supported = details.filter((d) => d.supporting_citations.length > 0);
  return {
    overall_confidence: details.length ? round2(details.reduce((a, d) => a + d.confidence, 0) / details.length) : 0,
    total_claims: details.length,
    supported_claims: supported.length,
    unsupported_claims: details.filter((d) => !d.supporting_citations.length).map((d) => d.claim),
    conflicts,
    claim_details: details,
  };
}

/** Conflicts a model names: `[{"claim": <claim number>, "citation": <n>, "explanation": "..."}]`, checked against the claims and citations. */
export function conflictsOf(text: string, claims: { claim: string; cited: number[] }[], citations: number): Conflict[] {
  let v: unknown;
  try {
    const m = /\[[\s\S]*\]/.exec(text);
    v = m ? JSON.parse(m[0]) : undefined;
  } catch {
    return [];
  }
  if (!Array.isArray(v)) return [];
  const out: Conflict[] = [];
  for (const x of v) {
    const o = (x ?? {}) as Record<string, unknown>;
    const c = claims[Number(o.claim) - 1];
    const n = Number(o.citation);
    if (!c || !Number.isInteger(n) || n < 1 || n > citations) continue;
    if (out.some((y) => y.claim === c.claim && y.citation === n)) continue;
    out.push({ claim: c.claim, citation: n, explanation: typeof o.explanation === 'string' ? o.explanation : '' });
  }
  return out;
}

const EXCERPT = 1500;

/** Verifies the answer against its citations; the model step runs only when there are claims. */
export async function verifyResearch(
  ctx: WorkflowContext,
  p: Prepared,
  answer: string,
  citations: Source[],
): Promise<{ verification: Verification; out?: AgentOutput }> {
  const checked = checkClaims(answer, citations);
  if (!checked.length) return { verification: verificationOf(checked, []) };
  const cited = [...new Set(checked.flatMap((c) => c.cited))].filter((n) => n <= citations.length).sort((a, b) => a - b);
  const turn = await modelTurn(
    ctx,
    p.agent,
    { ...p.base, agentId: 'verifier' },
    'research-verify',
    [
      {
        role: 'system',
        content:
          'You check research claims against their sources for contradictions. Name only a source that states something incompatible with a claim; ' +
          'a source that merely does not mention it is no conflict. Respond with a JSON array (empty when there is none): ' +
          '[{"claim": <claim number>, "citation": <source number>, "explanation": "..."}].',
      },
      {
        role: 'user',
        content:
          `Claims:\n${checked.map((c, i) => `${i + 1}. ${c.claim} (cites ${c.cited.map((n) => `[${n}]`).join(', ')})`).join('\n')}\n\n` +
          `Sources:\n${cited.map((n) => `[${n}] ${citations[n - 1]!.url}\n${readTextOf(citations[n - 1]!).slice(0, EXCERPT)}`).join('\n\n')}`,
      },
    ],
    undefined,
    { announce: true, emitOutput: false },
  );
  const conflicts = conflictsOf(turn.text, checked, citations.length);
  return { verification: verificationOf(checked, conflicts), out: asOutput('verifier', 'research-verify', turn) };
}
