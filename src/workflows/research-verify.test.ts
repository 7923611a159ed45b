/** The lexical support rule, claims of an answer, verification in the spec's shape, and facts. */
import { describe, expect, it } from 'vitest';
import { factsOf } from './research-facts.js';
import type { Source } from './research-sources.js';
import { checkClaims, claimsOf, conflictsOf, supportOf, verificationOf } from './research-verify.js';

const src = (text: string, over: Partial<Source> = {}): Source => ({
  url: 'https://a.test/',
  canonical: 'https://a.test',
  title: '',
  snippet: '',
  text,
  fetched: true,
  truncated: false,
  ...over,
});

describe('support', () => {
  it('needs most content words and every number of the claim in the source', () => {
    const page = 'JetStream stores messages in streams. A stream keeps 1,000 messages by default; consumers read them.';
    expect(supportOf('Streams store messages', page).supported).toBe(true);
    expect(supportOf('A stream keeps 1000 messages', page).supported).toBe(true);
    expect(supportOf('A stream keeps 5000 messages', page).supported).toBe(false);
    expect(supportOf('Kafka partitions replicate leaders across brokers', page)).toEqual({ coverage: 0, supported: false });
  });
});

describe('claims', () => {
  it('are the cited sentences, markers and list marks removed', () => {
    expect(claimsOf('# Report\nIntro without citation.\n- Streams hold messages [1]. Consumers read them. [2]\nEnd [1, 2]!')).toEqual([
      { claim: 'Streams hold messages.', cited: [1] },
      { claim: 'Consumers read them.', cited: [2] },
      { claim: 'End!', cited: [1, 2] },
    ]);
  });
});

describe('what a claim is checked against', () => {
  it('is the fetched page only: a snippet or a title met in search results supports nothing', () => {
    const answer = 'JetStream stores messages in streams [1]. Consumers acknowledge messages [2].';
    const snippetOnly = src('', { fetched: false, snippet: 'JetStream stores messages in streams.' });
    const titled = src('Unrelated page text about kites.', { title: 'Consumers acknowledge messages' });
    expect(checkClaims(answer, [snippetOnly, titled]).map((c) => c.supporting)).toEqual([[], []]);
    expect(checkClaims(answer, [src('JetStream stores messages in streams.'), src('Consumers acknowledge messages.')]).map((c) => c.supporting)).toEqual([
      [1],
      [2],
    ]);
  });

  it('keeps code and brackets that are no citation in the claim', () => {
    expect(claimsOf('Read `arr[0]` first [1]. Sales grew [2020-2023] here [2].\n```\nx[1]. y [2].\n```')).toEqual([
      { claim: 'Read `arr[0]` first.', cited: [1] },
      { claim: 'Sales grew [2020-2023] here.', cited: [2] },
    ]);
  });
});

describe('verification', () => {
  it('has the spec’s fields: supported and unsupported claims, conflicts, per-claim citations and confidence', () => {
    const cites = [src('JetStream stores messages in streams.'), src('Consumers acknowledge messages they read.')];
    const answer = 'JetStream stores messages in streams [1]. Consumers delete streams nightly [2].';
    const checked = checkClaims(answer, cites);
    const v = verificationOf(checked, []);
    expect(v).toEqual({
      overall_confidence: 0.56,
      total_claims: 2,
      supported_claims: 1,
      unsupported_claims: ['Consumers delete streams nightly.'],
      conflicts: [],
      claim_details: [
        { claim: 'JetStream stores messages in streams.', supporting_citations: [1], conflicting_citations: [], confidence: 1 },
        { claim: 'Consumers delete streams nightly.', supporting_citations: [], conflicting_citations: [], confidence: 0.13 },
      ],
    });
    const conflicts = conflictsOf('[{"claim": 1, "citation": 1, "explanation": "says otherwise"}, {"claim": 7, "citation": 1}]', checked, 2);
    expect(conflicts).toEqual([{ claim: 'JetStream stores messages in streams.', citation: 1, explanation: 'says otherwise' }]);
    const w = verificationOf(checked, conflicts);
    expect(w.claim_details[0]).toEqual({
      claim: 'JetStream stores messages in streams.',
      supporting_citations: [],
      conflicting_citations: [1],
      confidence: 0.25,
    });
    expect(w.supported_claims).toBe(0);
    expect(verificationOf([], [])).toMatchObject({ overall_confidence: 0, total_claims: 0 });
  });
});

describe('facts', () => {
  it('keeps the spec’s fields, drops unknown citations, caps unsupported confidence, counts the summary', () => {
    const cites = [src('JetStream stores messages in streams since 2021.')];
    const { facts, summary } = factsOf(
      JSON.stringify({
        facts: [
          {
            statement: 'JetStream stores messages in streams',
            confidence: 0.9,
            source_citation: [1, 4],
            category: 'definition',
            entity_mentions: ['JetStream'],
          },
          { statement: 'Streams replicate to 3 servers', confidence: 0.95, source_citation: [1], category: 'statistic', temporal_marker: '2021' },
          { statement: '' },
        ],
        contradictions: [{ statement: 'x', citations: [1] }],
      }),
      cites,
    );
    expect(facts).toEqual([
      {
        statement: 'JetStream stores messages in streams',
        confidence: 0.9,
        source_citation: [1],
        category: 'definition',
        entity_mentions: ['JetStream'],
        temporal_marker: null,
        is_quantitative: false,
      },
      {
        statement: 'Streams replicate to 3 servers',
        confidence: 0.3,
        source_citation: [1],
        category: 'statistic',
        entity_mentions: [],
        temporal_marker: '2021',
        is_quantitative: true,
      },
    ]);
    expect(summary).toEqual({ total_facts: 2, high_confidence: 1, categorized_facts: { definition: 1, statistic: 1 }, contradiction_count: 1 });
    expect(factsOf('not json', cites).facts).toEqual([]);
  });
});
