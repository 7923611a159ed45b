/**
 * An exact rational's decimal form, shared by the evaluator (./calculator-eval.mjs, in the worker
 * threads) and the fast path (./calculator-simple.ts, on the service's thread): both must print
 * the same number the same way, and this module loads without mathjs.
 */
/** Fractional digits past which a result is printed as a fraction instead of a decimal. */
export const MAX_DECIMAL_PLACES = 50;

const abs = (x) => (x < 0n ? -x : x);

/** The exact decimal form of n/d (d > 0, reduced) if d has no prime factors but 2 and 5 and it is short; else null. */
export function finiteDecimal(n, d) {
  let twos = 0;
  let fives = 0;
  let r = d;
  for (; r % 2n === 0n; twos++) r /= 2n;
  for (; r % 5n === 0n; fives++) r /= 5n;
  const places = Math.max(twos, fives);
  if (r !== 1n || places > MAX_DECIMAL_PLACES) return null;
  const s = (abs(n) * (10n ** BigInt(places) / d)).toString().padStart(places + 1, '0');
  return (n < 0n ? '-' : '') + (places === 0 ? s : `${s.slice(0, -places)}.${s.slice(-places)}`);
}
