/**
 * The calculator's worker thread: evaluates one expression per message, so that a heavy
 * expression runs beside the service's event loop instead of on it, and the time limit can
 * stop it by terminating the thread (./calculator.ts). Plain JavaScript: a worker thread loads
 * no TypeScript loader, and `npm run build` copies it beside tools/calculator.js.
 */
import { parentPort } from 'node:worker_threads';
import { ExpressionError, evaluateExpression } from './calculator-eval.mjs';

// Loading mathjs and the first parse take a while (more than a second of CPU on a slow machine):
// done before the worker says it is ready, since the time limit counts from then.
evaluateExpression('sqrt(1/4) + 2^3! - pi');
parentPort.postMessage({ ready: true });
parentPort.on('message', ({ id, expression }) => {
  try {
    parentPort.postMessage({ id, ok: true, result: evaluateExpression(expression) });
  } catch (e) {
    parentPort.postMessage({ id, ok: false, message: e instanceof Error ? e.message : String(e), expressionError: e instanceof ExpressionError });
  }
});
