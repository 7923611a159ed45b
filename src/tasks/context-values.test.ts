/** Context values as clients send them: every recognised key, every accepted spelling, the refusals. */
import { describe, expect, it } from 'vitest';
import { AppError, Code } from '../kernel/index.js';
import {
  CONTEXT_VALUE_RULES,
  contextBoolean,
  contextInteger,
  normaliseContext,
  parseBoolean,
  parseInteger,
  parseNumber,
  recognisedNumber,
} from './context-values.js';
import { notAvailableField } from './not-available.js';
import { checkSubmission } from './submit.js';

const FLAGS = ['disable_ai', 'force_research', 'iterative_research_enabled', 'enable_fact_extraction', 'force_swarm', 'require_approval', 'require_review'];
const INTEGERS: [string, number, number][] = [
  ['iterative_max_iterations', 1, 5],
  ['history_window_size', 1, 1000],
  ['primers_count', 0, 1000],
  ['recents_count', 0, 1000],
  ['review_timeout', 1, 86_400],
];
const RATIOS = ['compression_trigger_ratio', 'compression_target_ratio'];

const TRUE_SPELLINGS = [true, 'true', 'TRUE', 'True', ' true ', '1', ' 1\n'];
const FALSE_SPELLINGS = [false, 'false', 'FALSE', 'False', '\tfalse', '0', ' 0 '];
const NOT_BOOLEANS = ['yes', 'no', 'on', '', ' ', 'truthy', '2', '-1', 1, 0, 1.5, [], {}, [true]];

/** The 400 a call throws (its message), or undefined when it does not throw. */
function refusal(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe(Code.InvalidArgument);
    return (err as AppError).message;
  }
}

describe('the rules cover every recognised non-string context key', () => {
  it('lists exactly the flags, integers and ratios of the interface', () => {
    expect(Object.keys(CONTEXT_VALUE_RULES).sort()).toEqual([...FLAGS, ...INTEGERS.map(([k]) => k), ...RATIOS].sort());
    for (const k of FLAGS) expect(CONTEXT_VALUE_RULES[k], k).toEqual({ type: 'boolean' });
    for (const [k, min, max] of INTEGERS) expect(CONTEXT_VALUE_RULES[k], k).toEqual({ type: 'integer', min, max });
    for (const k of RATIOS) expect(CONTEXT_VALUE_RULES[k], k).toEqual({ type: 'number', min: 0, max: 1, minExclusive: true });
  });
});

describe('parse helpers', () => {
  it('reads booleans in every accepted spelling and nothing else', () => {
    for (const v of TRUE_SPELLINGS) expect(parseBoolean(v), JSON.stringify(v)).toBe(true);
    for (const v of FALSE_SPELLINGS) expect(parseBoolean(v), JSON.stringify(v)).toBe(false);
    for (const v of [...NOT_BOOLEANS, null, undefined]) expect(parseBoolean(v), JSON.stringify(v)).toBeUndefined();
  });

  it('reads integers from numbers and strings of digits', () => {
    expect([3, '3', ' 3 ', '+3', '-2', '007', 0, '0'].map(parseInteger)).toEqual([3, 3, 3, 3, -2, 7, 0, 0]);
    for (const v of [3.5, '3.5', '3.0', '3e0', '0x10', '', ' ', 'three', '1_000', NaN, Infinity, 2 ** 60, '99999999999999999999', true, null, [3]]) {
      expect(parseInteger(v), String(v)).toBeUndefined();
    }
  });

  it('reads numbers from numbers and decimal strings', () => {
    expect([0.5, '0.5', ' .5 ', '1', '1.', '5e-1', '+0.25', '-1'].map(parseNumber)).toEqual([0.5, 0.5, 0.5, 1, 1, 0.5, 0.25, -1]);
    for (const v of ['', ' ', 'half', '0x1', 'Infinity', 'NaN', '1/2', '0.5.1', NaN, Infinity, false, null, {}]) {
      expect(parseNumber(v), String(v)).toBeUndefined();
    }
  });
});

describe('strict readers', () => {
  it('give undefined for an absent or null key', () => {
    expect(contextBoolean({}, 'force_research')).toBeUndefined();
    expect(contextBoolean({ force_research: null }, 'force_research')).toBeUndefined();
    expect(contextInteger({ review_timeout: null }, 'review_timeout', 1, 10)).toBeUndefined();
  });

  it('name the key and the range in the 400', () => {
    expect(refusal(() => contextBoolean({ require_review: 'sure' }, 'require_review'))).toBe('context.require_review must be a boolean');
    expect(refusal(() => contextInteger({ review_timeout: '0' }, 'review_timeout', 60, 3600))).toBe(
      'context.review_timeout must be an integer from 60 to 3600',
    );
    expect(contextInteger({ review_timeout: ' 900 ' }, 'review_timeout', 60, 3600)).toBe(900);
    expect(contextBoolean({ require_approval: 'TRUE' }, 'require_approval')).toBe(true);
  });

  it('never read a key inherited from the prototype', () => {
    expect(contextBoolean(Object.create({ force_research: 'true' }) as Record<string, unknown>, 'force_research')).toBeUndefined();
  });
});

describe('normaliseContext', () => {
  it('turns every flag spelling into a real boolean', () => {
    for (const k of FLAGS) {
      for (const v of TRUE_SPELLINGS) expect(normaliseContext({ [k]: v })[k], `${k}=${JSON.stringify(v)}`).toBe(true);
      for (const v of FALSE_SPELLINGS) expect(normaliseContext({ [k]: v })[k], `${k}=${JSON.stringify(v)}`).toBe(false);
    }
  });

  it('refuses any other flag value, naming the key', () => {
    for (const k of FLAGS) {
      for (const v of NOT_BOOLEANS)
        expect(
          refusal(() => normaliseContext({ [k]: v })),
          `${k}=${JSON.stringify(v)}`,
        ).toBe(`context.${k} must be a boolean`);
    }
  });

  it('turns integers given as numbers or strings into numbers, inside their range', () => {
    for (const [k, min, max] of INTEGERS) {
      for (const [v, want] of [
        [min, min],
        [String(min), min],
        [` ${max} `, max],
        [max, max],
      ] as const) {
        expect(normaliseContext({ [k]: v })[k], `${k}=${JSON.stringify(v)}`).toBe(want);
      }
      for (const v of [min - 1, String(min - 1), max + 1, String(max + 1), 2.5, '2.5', 'two', '', true, [2], {}]) {
        expect(
          refusal(() => normaliseContext({ [k]: v })),
          `${k}=${JSON.stringify(v)}`,
        ).toBe(`context.${k} must be an integer from ${min} to ${max}`);
      }
    }
  });

  it('turns ratios given as numbers or strings into numbers above 0 and at most 1', () => {
    for (const k of RATIOS) {
      for (const [v, want] of [
        [0.5, 0.5],
        ['0.5', 0.5],
        [' 1 ', 1],
        [1, 1],
        ['.25', 0.25],
      ] as const) {
        expect(normaliseContext({ [k]: v })[k], `${k}=${JSON.stringify(v)}`).toBe(want);
      }
      for (const v of [0, '0', -0.5, 1.01, '1.5', 'half', '', false, [0.5]]) {
        expect(
          refusal(() => normaliseContext({ [k]: v })),
          `${k}=${JSON.stringify(v)}`,
        ).toBe(`context.${k} must be a number greater than 0 and at most 1`);
      }
    }
  });

  it('keeps unset and unrecognised keys as they are, and does not touch its input', () => {
    const input = { force_research: 'true', disable_ai: null, role: 'research', prompt_params: { n: '3' }, custom_flag: 'true', history_window_size: '10' };
    const out = normaliseContext(input);
    expect(out).toEqual({ force_research: true, disable_ai: null, role: 'research', prompt_params: { n: '3' }, custom_flag: 'true', history_window_size: 10 });
    expect(input.force_research).toBe('true');
    expect(normaliseContext({})).toEqual({});
  });
});

describe('lenient reader (contexts stored before the submission normalised them)', () => {
  it('reads valid numbers and ignores invalid ones', () => {
    expect(recognisedNumber({ history_window_size: '12' }, 'history_window_size')).toBe(12);
    expect(recognisedNumber({ history_window_size: 5000 }, 'history_window_size')).toBeUndefined();
    expect(recognisedNumber({ compression_trigger_ratio: 'x' }, 'compression_trigger_ratio')).toBeUndefined();
    expect(recognisedNumber({ force_research: true }, 'force_research')).toBeUndefined();
    expect(recognisedNumber({ other: 3 }, 'other')).toBeUndefined();
  });
});

describe('not-available flags after coercion', () => {
  it('no longer refuses force_swarm (the swarm runs), whatever its spelling', () => {
    for (const v of [...TRUE_SPELLINGS, ...FALSE_SPELLINGS, null]) expect(notAvailableField({}, { force_swarm: v }), JSON.stringify(v)).toBeUndefined();
  });
});

describe('checkSubmission', () => {
  const check = (context: Record<string, unknown>, extra: Record<string, unknown> = {}) => checkSubmission({ query: 'q', context, ...extra }, 'small');

  it('runs the research workflow for a string flag and stores real values', () => {
    const s = check({ force_research: 'true', iterative_research_enabled: 'FALSE', enable_fact_extraction: '1', iterative_max_iterations: '4' });
    expect(s.research).toEqual({ strategy: 'standard', maxIterations: 4, iterative: false, factExtraction: true });
    expect(s.context).toEqual({ force_research: true, iterative_research_enabled: false, enable_fact_extraction: true, iterative_max_iterations: 4 });
  });

  it('reads "false" as off', () => {
    const s = check({ force_research: 'false' });
    expect(s.research).toBeUndefined();
    expect(s.context.force_research).toBe(false);
  });

  it('keeps the refusals, after coercion', () => {
    expect(refusal(() => check({ force_research: 'yes' }))).toBe('context.force_research must be a boolean');
    expect(check({ force_swarm: 'true' }).context.force_swarm).toBe(true);
    expect(check({ force_swarm: 'true', force_research: 'true' }).context.force_swarm).toBe(true);
    expect(refusal(() => check({ force_swarm: 'true', require_review: 'true' }))).toMatch(/context.force_swarm cannot be combined/);
    expect(check({ force_swarm: 'false' }).context.force_swarm).toBe(false);
    expect(refusal(() => check({ force_research: '1', iterative_max_iterations: '9' }))).toBe(
      'context.iterative_max_iterations must be an integer from 1 to 5',
    );
    expect(refusal(() => check({ iterative_max_iterations: '2' }))).toBe(
      'context.iterative_max_iterations applies to the research workflow: set research_strategy or context.force_research',
    );
    expect(refusal(() => check({ disable_ai: 'true' }))).toBe('disable_ai runs a template without a model: it needs context.template');
    expect(refusal(() => check({ disable_ai: 'true', model_tier: 'large' }))).toBe(
      'disable_ai cannot be combined with model_tier, model_override or provider_override',
    );
    expect(refusal(() => check({ primers_count: '-1' }))).toBe('context.primers_count must be an integer from 0 to 1000');
  });
});
