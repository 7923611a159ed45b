/** The calculator tool: exact rational arithmetic, float fallback, errors with positions, size caps, its worker's time limit, its fast path. */
import { afterAll, describe, expect, it } from 'vitest';
import { calculatorTool, MAX_FACTORIAL } from '../src/tools/calculator.js';
import { SIMPLE_MAX_CHARS, evaluateSimple } from '../src/tools/calculator-simple.js';
import { evaluateExpression } from './helpers/calculator.js';
import { ToolError } from '../src/tools/tool.js';

const ctx = { signal: new AbortController().signal };

/** The error a failing expression throws (the test fails if it does not throw a ToolError). */
function failure(expression: string): ToolError {
  try {
    evaluateExpression(expression);
  } catch (e) {
    expect(e).toBeInstanceOf(ToolError);
    return e as ToolError;
  }
  throw new Error(`expected ${JSON.stringify(expression)} to fail`);
}

describe('calculator: exact arithmetic', () => {
  it.each([
    ['0.1+0.2', '0.3'],
    ['1/3*3', '1'],
    ['1/3', '1/3'],
    ['2/4', '0.5'],
    ['1/3 + 1/6', '0.5'],
    ['2^100', '1267650600228229401496703205376'],
    ['2**10', '1024'],
    ['2^3^2', '512'], // right-associative
    ['-2^2', '-4'], // unary minus binds looser than ^
    ['(-2)^2', '4'],
    ['2^-2', '0.25'],
    ['2 + 3 * 4', '14'],
    ['(2 + 3) * 4', '20'],
    ['10 - 4 - 3', '3'], // left-associative
    ['100 / 10 / 5', '2'],
    ['-(3)', '-3'],
    ['--3', '3'],
    ['10 % 3', '1'],
    ['-7 % 3', '2'], // sign of the divisor, as in Python
    ['5.5 % 2', '1.5'],
    ['1e3', '1000'],
    ['1.5e-3', '0.0015'],
    ['2.5E+2', '250'],
    ['.5 + 5.', '5.5'],
    ['1e400 / 1e399', '10'], // beyond the double range, still exact
    ['5!', '120'],
    ['0!', '1'],
    ['3!!', '720'],
    ['sqrt(16)', '4'],
    ['sqrt(9/4)', '1.5'],
    ['4^0.5', '2'],
    ['(-8)^(1/3)', '-2'],
    ['abs(-1/3)', '1/3'],
    ['floor(2.7)', '2'],
    ['floor(-2.5)', '-3'],
    ['ceil(-2.5)', '-2'],
    ['round(2.5)', '3'],
    ['round(-2.5)', '-3'], // half away from zero
    ['round(3.14159, 2)', '3.14'],
    ['min(3, 1/2, 2)', '0.5'],
    ['max(-1, -5)', '-1'],
    ['log(1000)', '3'],
    ['log(0.001)', '-3'],
    ['log(8, 2)', '3'],
    ['ln(1)', '0'],
    ['cos(0)', '1'],
    ['1^(10^100)', '1'], // no size explosion for 1, 0 and -1
    ['(-1)^(10^100 + 1)', '-1'],
    ['6 × 7 ÷ 2 − 1', '20'],
  ])('%s = %s', (expression, result) => {
    const r = evaluateExpression(expression);
    expect(r.result).toBe(result);
    expect(r.exact).toBe(true);
  });

  it('gives a fraction its decimal approximation and numeric value', () => {
    const r = evaluateExpression('1/3');
    expect(r).toMatchObject({ result: '1/3', exact: true, decimal: '0.33333333333333333333' });
    expect(r.value).toBeCloseTo(1 / 3, 15);
    expect(evaluateExpression('-22/7')).toMatchObject({ result: '-22/7', decimal: '-3.1428571428571428571' });
  });

  it('keeps every digit of large results; value is null beyond the double range', () => {
    const r = evaluateExpression('100!');
    expect(r.result).toHaveLength(158);
    expect(r.result.startsWith('93326215443944152681')).toBe(true);
    expect(r.value).toBeCloseTo(9.33262154439441e157, -143);
    expect(evaluateExpression('10^400').value).toBeNull();
    expect(evaluateExpression(`${MAX_FACTORIAL}!`).result).toHaveLength(16326);
  });
});

describe('calculator: floating point', () => {
  it.each([
    ['sqrt(2)', Math.SQRT2],
    ['pi', Math.PI],
    ['e', Math.E],
    ['2 * pi', 2 * Math.PI],
    ['sin(pi / 2)', 1],
    ['atan(1) * 4', Math.PI],
    ['asin(1)', Math.PI / 2],
    ['acos(0)', Math.PI / 2],
    ['tan(pi / 4)', 1],
    ['ln(e)', 1],
    ['log(2)', Math.log10(2)],
    ['log(10, e)', Math.log(10)],
    ['exp(2)', Math.exp(2)],
    ['2^0.5', Math.SQRT2],
    ['(-2)^(1/3)', -Math.cbrt(2)], // odd roots of negatives are real
    ['round(pi, 3)', 3.142],
    ['max(1, pi)', Math.PI],
    ['1/3 + pi', 1 / 3 + Math.PI],
  ])('%s ≈ %d (not exact)', (expression, value) => {
    const r = evaluateExpression(expression);
    expect(r.exact).toBe(false);
    expect(r.value).toBeCloseTo(value, 12);
    expect(Number(r.result)).toBeCloseTo(value, 12);
  });

  it('reads names case-insensitively and takes π', () => {
    expect(evaluateExpression('PI').value).toBe(Math.PI);
    expect(evaluateExpression('Sqrt(4)').result).toBe('2');
    expect(evaluateExpression('π').value).toBe(Math.PI);
  });
});

describe('calculator: errors', () => {
  it('reports syntax errors with the position', () => {
    const e = failure('(1 + 2');
    expect(e.kind).toBe('bad_arguments');
    expect(e.message).toMatch(/expected '\)' but found end of expression at position 7/);
    expect(failure('1 +* 2').message).toMatch(/unexpected '\*' at position 4/);
    expect(failure('2 pi').message).toMatch(/unexpected 'pi' \(write \* for multiplication\) at position 3/);
    expect(failure('2 $ 3').message).toMatch(/unexpected character '\$' at position 3/);
    expect(failure('1,2').message).toMatch(/unexpected ',' at position 2/);
    expect(failure('1 +').message).toMatch(/unexpected end of expression at position 4/);
    // and points at it
    expect(failure('(1 + 2').message).toContain('\n  (1 + 2\n        ^');
  });

  it('rejects division by zero', () => {
    expect(failure('1/0').message).toMatch(/division by zero at position 2/);
    expect(failure('1/(2-2)').message).toMatch(/division by zero/);
    expect(failure('5 % 0').message).toMatch(/division by zero/);
    expect(failure('0^-1').message).toMatch(/division by zero/);
    expect(failure('sqrt(2)/0').message).toMatch(/division by zero/);
  });

  it('rejects unknown names and misused functions and constants', () => {
    expect(failure('foo + 1').message).toMatch(/unknown identifier 'foo' at position 1/);
    expect(failure('2 * bar(3)').message).toMatch(/unknown function 'bar' at position 5/);
    expect(failure('sqrt + 1').message).toMatch(/'sqrt' is a function/);
    expect(failure('pi(2)').message).toMatch(/'pi' is a constant/);
    expect(failure('sqrt(1, 2)').message).toMatch(/sqrt\(\) takes 1 argument, got 2/);
    expect(failure('constructor(1)').message).toMatch(/unknown function/);
    expect(failure('__proto__').message).toMatch(/unknown identifier/);
  });

  it('rejects results that are not real numbers', () => {
    expect(failure('sqrt(-1)').message).toMatch(/not a real number/);
    expect(failure('(-2)^0.5').message).toMatch(/not a real number/);
    expect(failure('log(0)').message).toMatch(/not positive/);
    expect(failure('ln(-1)').message).toMatch(/not positive/);
    expect(failure('log(10, 1)').message).toMatch(/base/);
    expect(failure('asin(2)').message).toMatch(/outside \[-1, 1\]/);
    expect(failure('e^1000').message).toMatch(/overflow/);
  });

  it('caps factorials', () => {
    expect(failure(`${MAX_FACTORIAL + 1}!`).message).toMatch(/factorial argument too large/);
    expect(failure('(10^100)!').message).toMatch(/factorial argument too large/);
    expect(failure('2.5!').message).toMatch(/non-negative integers/);
    expect(failure('(-1)!').message).toMatch(/non-negative integers/);
  });

  it('refuses exponent bombs at once instead of computing them', () => {
    for (const bomb of ['9^9^9', '10^100000', '2^(10^18)', '1.5^1000000', '(1/3)^100000', '1e999999999', '(2^60000) * (2^60000)']) {
      const t = performance.now();
      expect(failure(bomb).message).toMatch(/too large/);
      expect(performance.now() - t).toBeLessThan(500);
    }
  });

  it('bounds the work on huge fractions', () => {
    const heavy = Array.from({ length: 40 }, () => '(3^10300/7^5800)').join('*(7^5800/3^10300)*');
    const t = performance.now();
    expect(failure(heavy).message).toMatch(/too much exact arithmetic/);
    expect(performance.now() - t).toBeLessThan(10_000); // without the budget: seconds more, and a result
  });
});

describe('calculator tool', () => {
  const tool = calculatorTool();
  afterAll(() => tool.close());

  it('describes itself', () => {
    expect(tool).toMatchObject({ name: 'calculator', category: 'math', retryable: true, rateLimitSetting: 'CALCULATOR_RATE_LIMIT', dangerous: false });
    expect(tool.parameters.required).toEqual(['expression']);
    expect(tool.parameters.properties.expression).toMatchObject({ type: 'string', maxLength: 1000 });
  });

  it('returns the structured result and a line for the model', async () => {
    const r = await tool.run({ expression: '1/3 + 1/3' }, ctx);
    expect(r.output).toMatchObject({ expression: '1/3 + 1/3', result: '2/3', exact: true, decimal: '0.66666666666666666667' });
    expect(r.text).toBe('1/3 + 1/3 = 2/3 ≈ 0.66666666666666666667');
    const f = await tool.run({ expression: 'sqrt(2)' }, ctx);
    expect(f.text).toBe('sqrt(2) = 1.4142135623730951 (floating-point approximation)');
  });

  it('rejects empty and over-long expressions', async () => {
    await expect(tool.run({ expression: '  ' }, ctx)).rejects.toMatchObject({ kind: 'bad_arguments' });
    await expect(tool.run({ expression: '1+'.repeat(600) + '1' }, ctx)).rejects.toThrow(/longer than 1000/);
  });
});

describe('calculator: time limit', () => {
  /** Distinct factorials up to the length cap: within every size cap, and seconds of work. */
  const heavy = (() => {
    const terms: string[] = [];
    for (let n = MAX_FACTORIAL; [...terms, `${n}!`].join('+').length <= 1000; n--) terms.push(`${n}!`);
    return terms.join('+');
  })();

  it('stops a heavy expression at its limit while the event loop keeps running, and serves the next call', async () => {
    const tool = calculatorTool({ timeoutMs: 200, workers: 1 });
    try {
      await tool.run({ expression: '2^10' }, ctx); // the worker is warm: the limit is the evaluation's alone
      const events: string[] = [];
      // Due long before the limit: it fires first unless something holds the event loop.
      const ticker = setInterval(() => events.push('tick'), 5);
      const error = await tool.run({ expression: heavy }, ctx).then(
        () => events.push('finished'),
        (e: unknown) => (events.push('stopped'), e),
      );
      clearInterval(ticker);
      expect(events).toContain('tick');
      expect(events.indexOf('tick')).toBeLessThan(events.indexOf('stopped'));
      expect(events).not.toContain('finished');
      expect(error).toBeInstanceOf(ToolError);
      expect(error).toMatchObject({ kind: 'limit', message: expect.stringMatching(/time limit exceeded/) });
      expect((await tool.run({ expression: '2^10' }, ctx)).output).toMatchObject({ result: '1024', exact: true });
    } finally {
      await tool.close();
    }
  });

  it('ends a call cancelled by its caller, and the next call still runs', async () => {
    const tool = calculatorTool({ workers: 1 });
    try {
      const controller = new AbortController();
      const call = tool.run({ expression: heavy }, { signal: controller.signal });
      controller.abort(new Error('task cancelled'));
      await expect(call).rejects.toMatchObject({ kind: 'limit', message: expect.stringMatching(/cancelled: task cancelled/) });
      expect((await tool.run({ expression: '6 × 7' }, ctx)).output).toMatchObject({ result: '42' });
    } finally {
      await tool.close();
    }
  });
});

describe('calculator: fast path on the calling thread', () => {
  it('answers plain arithmetic exactly as the evaluator does', () => {
    for (const e of [
      '6*7',
      '0.1+0.2',
      '19.99 * 3 + 4.5',
      '(2 + 3) * 4',
      '-7/2',
      '10 - 4 - 3',
      '100 / 10 / 5',
      '--3',
      '2*-3',
      '+-+4',
      '1/8',
      '007 + 1',
      '0 * -5',
      '((1))',
      '1.50 * 2',
    ]) {
      const fast = evaluateSimple(e);
      expect(fast, e).toBeDefined();
      expect(fast, e).toEqual(evaluateExpression(e));
    }
  });

  it('leaves everything else to the worker', () => {
    for (const e of [
      '1/3',
      '1/0',
      '5/(2-2)',
      '2^3',
      '2**3',
      '10 % 3',
      '1e5',
      '.5',
      '5.',
      '1.2.3',
      '2 3',
      '2(3)',
      '(1',
      '1)',
      'pi',
      'sqrt(4)',
      '6 × 7',
      '1\t+ 1',
      '2_0',
      '',
    ]) {
      expect(evaluateSimple(e), e).toBeUndefined();
    }
    expect(evaluateSimple(`1+${'1'.repeat(SIMPLE_MAX_CHARS)}`)).toBeUndefined(); // long
    expect(evaluateSimple(`${'9'.repeat(41)}`)).toBeUndefined(); // more digits than a double's nearest value is sure for
    expect(evaluateSimple('1/1024/1024/1024/1024/1024/1024')).toBeUndefined(); // 60 decimal places: a fraction
  });

  it('agrees with the evaluator on random expressions of its grammar', () => {
    let seed = 18;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const num = () => {
      const int = String(rand(4) === 0 ? rand(10) : rand(100_000));
      return rand(3) === 0 ? `${int}.${String(rand(1000)).padStart(rand(4) + 1, '0')}` : int;
    };
    const expr = (depth: number): string => {
      const sign = ['', '', '', '-', '+'][rand(5)];
      const atom = depth > 0 && rand(3) === 0 ? `(${expr(depth - 1)})` : num();
      const tail = depth > 0 && rand(2) === 0 ? `${[' + ', '-', ' * ', '/'][rand(4)]}${expr(depth - 1)}` : '';
      return `${sign}${atom}${tail}`;
    };
    let answered = 0;
    for (let i = 0; i < 1000; i++) {
      const e = expr(4);
      const fast = evaluateSimple(e);
      let full: unknown;
      try {
        full = evaluateExpression(e);
      } catch (err) {
        full = err;
      }
      if (fast === undefined) continue;
      answered++;
      expect(fast, e).toEqual(full);
    }
    expect(answered).toBeGreaterThan(250);
  });
});
