/**
 * The calculator's size caps, apart from its evaluator (./calculator-eval.mjs) so that the
 * service's main thread can state them (the tool's schema, its argument checks) without loading
 * mathjs, which only the worker threads need.
 */
/** Bits of an exact numerator. */
export const MAX_BITS = 65_536;
/** Smaller than MAX_BITS: reducing a fraction costs a gcd that grows with the square of its size. */
export const MAX_DENOMINATOR_BITS = 16_384;
export const MAX_FACTORIAL = 5_000;
export const MAX_EXPRESSION_CHARS = 1_000;
