/**
 * The calculator's evaluator called on the test's own thread (the service only runs it in worker
 * threads, src/tools/calculator.ts), with its errors as the tool reports them: ToolError
 * 'bad_arguments' carrying the position.
 */
import { type CalculatorResult, ExpressionError, evaluateExpression as evaluate } from '../../src/tools/calculator-eval.mjs';
import { ToolError } from '../../src/tools/index.js';

export function evaluateExpression(expression: string): CalculatorResult {
  try {
    return evaluate(expression);
  } catch (e) {
    if (e instanceof ExpressionError) throw new ToolError(e.message, 'bad_arguments');
    throw e;
  }
}
