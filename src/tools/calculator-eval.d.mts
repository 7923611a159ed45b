/** Types of ./calculator-eval.mjs (plain JavaScript, shared with the calculator's worker thread). */

export { MAX_BITS, MAX_DENOMINATOR_BITS, MAX_EXPRESSION_CHARS, MAX_FACTORIAL } from './calculator-limits.mjs';

/** An error of the expression (syntax, domain, size), with its position: the caller's fault. */
export declare class ExpressionError extends Error {}

export interface CalculatorResult extends Record<string, unknown> {
  expression: string;
  /** Exact: an integer, a short decimal, or a fraction "n/d". Float: the shortest round-trip form. */
  result: string;
  /** A decimal rendering of the result (20 significant digits for fractions). */
  decimal: string;
  exact: boolean;
  /** The nearest double; null when the result is beyond the double range. */
  value: number | null;
}

export declare function evaluateExpression(expression: string): CalculatorResult;
