/**
 * The calculator's fast path: a short expression of plain decimal numbers, + - * / and
 * parentheses ("6*7", "19.99 * 3 + 4.5") is evaluated on the calling thread instead of in a
 * worker (./calculator.ts). Its cost is bounded by its shape (at most SIMPLE_MAX_CHARS characters:
 * numbers of a few hundred bits, a few dozen operations, microseconds), so it never holds the
 * event loop and no time limit could stop it sooner; the thread hop it saves costs far more
 * than the evaluation (two thread wake-ups, two copies of the message).
 *
 * It answers only where its answer is the evaluator's own (./calculator-eval.mjs; checked
 * against it in test/tools-calculator.test.ts): an integer or a finite decimal of at most
 * EXACT_DIGITS significant digits. Anything else (other syntax, a division by zero, a
 * fraction like 1/3, a long result) is left to the worker, which also words every error.
 */
import { finiteDecimal } from './calculator-decimal.mjs';
import type { CalculatorResult } from './calculator-eval.mjs';

/** Longer expressions go to a worker, however simple. */
export const SIMPLE_MAX_CHARS = 100;
/** Digits below which a decimal's nearest double is that of its exact value (the evaluator rounds to 40 digits first). */
const EXACT_DIGITS = 40;

interface Rational {
  n: bigint;
  /** Always positive. */
  d: bigint;
}

class NotSimple extends Error {}

/** Digits, optionally a point and more digits (no exponent): "1e5", ".5" or "1.2.3" leave text that no rule takes, so the worker answers. */
const NUMBER = /(\d+)(?:\.(\d+))?/y;

const abs = (x: bigint) => (x < 0n ? -x : x);

function gcd(a: bigint, b: bigint): bigint {
  a = abs(a);
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Recursive descent over the expression: sums of products of signed numbers and parenthesised sums. */
class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  parse(): Rational {
    const v = this.sum();
    this.space();
    if (this.i !== this.s.length) throw new NotSimple();
    return v;
  }

  private space(): void {
    while (this.s[this.i] === ' ') this.i++;
  }

  private peek(): string | undefined {
    this.space();
    return this.s[this.i];
  }

  private sum(): Rational {
    let v = this.product();
    for (let op = this.peek(); op === '+' || op === '-'; op = this.peek()) {
      this.i++;
      const w = this.product();
      v = { n: op === '+' ? v.n * w.d + w.n * v.d : v.n * w.d - w.n * v.d, d: v.d * w.d };
    }
    return v;
  }

  private product(): Rational {
    let v = this.unary();
    for (let op = this.peek(); op === '*' || op === '/'; op = this.peek()) {
      this.i++;
      const w = this.unary();
      if (op === '*') v = { n: v.n * w.n, d: v.d * w.d };
      else if (w.n === 0n)
        throw new NotSimple(); // the worker words the error
      else v = { n: (w.n < 0n ? -v.n : v.n) * w.d, d: v.d * abs(w.n) };
    }
    return v;
  }

  private unary(): Rational {
    const c = this.peek();
    if (c === '-' || c === '+') {
      this.i++;
      const v = this.unary();
      return c === '-' ? { n: -v.n, d: v.d } : v;
    }
    if (c === '(') {
      this.i++;
      const v = this.sum();
      if (this.peek() !== ')') throw new NotSimple();
      this.i++;
      return v;
    }
    return this.number();
  }

  private number(): Rational {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) throw new NotSimple();
    this.i = NUMBER.lastIndex;
    const frac = m[2] ?? '';
    return { n: BigInt(m[1] + frac), d: 10n ** BigInt(frac.length) };
  }
}

/** The evaluator's result for a simple expression, or undefined when the worker must answer. */
export function evaluateSimple(expression: string): CalculatorResult | undefined {
  if (expression.length > SIMPLE_MAX_CHARS) return undefined;
  let v: Rational;
  try {
    v = new Parser(expression).parse();
  } catch (e) {
    if (e instanceof NotSimple) return undefined;
    throw e;
  }
  const g = gcd(v.n, v.d);
  const dec = finiteDecimal(v.n / g, v.d / g);
  if (dec === null || dec.replace(/^-?[0.]*/, '').replace('.', '').length > EXACT_DIGITS) return undefined;
  return { expression, result: dec, decimal: dec, exact: true, value: Number(dec) };
}
