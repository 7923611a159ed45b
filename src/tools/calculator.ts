/**
 * `calculator`: evaluates an arithmetic expression with a recursive-descent parser (no eval).
 *
 * Numbers are exact rationals over BigInt for as long as possible (0.1 + 0.2 is 3/10, 1/3*3 is 1,
 * 2^100 has all its digits, sqrt(9/4) is 3/2, log(1000) is 3); a value becomes a float only when
 * an irrational function, a constant (pi, e) or a power without an exact result is involved.
 *
 * Grammar, loosest binding first:
 *   expr     := term (('+' | '-') term)*
 *   term     := unary (('*' | '/' | '%') unary)*
 *   unary    := ('-' | '+') unary | power          so -2^2 = -(2^2) = -4
 *   power    := postfix (('^' | '**') unary)?      right-associative: 2^3^2 = 2^9
 *   postfix  := primary '!'*
 *   primary  := number | name | name '(' expr (',' expr)* ')' | '(' expr ')'
 *
 * Sizes are capped so that `9^9^9` or `100000!` fail at once instead of hanging: an exact
 * numerator may have at most MAX_BITS bits, a denominator MAX_DENOMINATOR_BITS, a factorial
 * argument at most MAX_FACTORIAL; sizes are estimated before a power is computed.
 */
import { type Tool, ToolError, type ToolOutput } from './tool.js';

/** Largest exact integer or numerator, in bits (2^65536 has 19,729 digits). */
export const MAX_BITS = 65_536;
/**
 * Largest exact denominator, in bits (4,933 digits): smaller, because reducing a fraction costs a
 * gcd whose time grows with the square of the denominator's size.
 */
export const MAX_DENOMINATOR_BITS = 16_384;
/** Largest factorial argument (5000! has 16,326 digits). */
export const MAX_FACTORIAL = 5_000;
export const MAX_EXPRESSION_CHARS = 1_000;
/** Exact non-integers print as decimals when they have at most this many fractional digits. */
const MAX_DECIMAL_PLACES = 50;
/** Significant digits of the decimal approximation of a fraction. */
const APPROX_DIGITS = 20;

// ---- Values -----------------------------------------------------------------------------------

/** An exact rational n/d (d > 0, gcd(n, d) = 1) or a float. */
type Value = { exact: true; n: bigint; d: bigint } | { exact: false; v: number };

class CalcError extends Error {
  constructor(
    message: string,
    readonly pos?: number,
  ) {
    super(message);
  }
}

const abs = (x: bigint): bigint => (x < 0n ? -x : x);

/**
 * Work left for gcds in the current evaluation, in units of (64-bit digits of a) x (digits of b):
 * Euclid's algorithm is quadratic, and an expression full of large coprime fractions could
 * otherwise take seconds. A million units is well under a second.
 */
const GCD_BUDGET = 1_000_000;
let gcdBudget = GCD_BUDGET;

function gcd(a: bigint, b: bigint): bigint {
  a = abs(a);
  b = abs(b);
  if (a === b || a === 1n || b === 1n) return a === b ? a : 1n;
  gcdBudget -= ((bitLength(a) >> 6) + 1) * ((bitLength(b) >> 6) + 1);
  if (gcdBudget < 0) throw new CalcError('the expression needs too much exact arithmetic on huge fractions; simplify it or use smaller numbers');
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function bitLength(x: bigint): number {
  if (x === 0n) return 0;
  const hex = abs(x).toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(parseInt(hex[0], 16)));
}

const digitsOf = (bits: number) => Math.floor(bits * Math.log10(2)).toLocaleString('en-US');
const TOO_LARGE = `number too large for exact arithmetic (at most ${digitsOf(MAX_BITS)} digits, ${digitsOf(MAX_DENOMINATOR_BITS)} in a denominator)`;

function checkSize(n: bigint, d: bigint): void {
  if (bitLength(n) > MAX_BITS || bitLength(d) > MAX_DENOMINATOR_BITS) throw new CalcError(TOO_LARGE);
}

function rat(n: bigint, d: bigint = 1n): Value {
  if (d === 0n) throw new CalcError('division by zero');
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const g = gcd(n, d);
  if (g > 1n) {
    n /= g;
    d /= g;
  }
  checkSize(n, d);
  return { exact: true, n, d };
}

function float(v: number): Value {
  if (Number.isNaN(v)) throw new CalcError('the result is not a real number');
  if (!Number.isFinite(v)) throw new CalcError('the result is too large (floating-point overflow)');
  return { exact: false, v };
}

const ZERO = rat(0n);
const ONE = rat(1n);

/** n/d as the nearest double (also when n and d are beyond the double range). */
function ratToNumber(n: bigint, d: bigint): number {
  if (n === 0n) return 0;
  const LIMIT = 2n ** 53n;
  if (abs(n) < LIMIT && d < LIMIT) return Number(n) / Number(d);
  const neg = n < 0n;
  const an = abs(n);
  // Scale to a quotient with ~64 significant bits, then apply the power of two.
  const shift = bitLength(an) - bitLength(d) - 64;
  const q = shift >= 0 ? an / (d << BigInt(shift)) : (an << BigInt(-shift)) / d;
  let v = Number(q);
  let e = shift;
  // Apply 2^e in steps so that intermediate powers do not overflow or underflow early.
  while (e > 0) {
    const step = Math.min(e, 1000);
    v *= 2 ** step;
    e -= step;
  }
  while (e < 0) {
    const step = Math.min(-e, 1000);
    v /= 2 ** step;
    e += step;
  }
  return neg ? -v : v;
}

function toNumber(x: Value): number {
  return x.exact ? ratToNumber(x.n, x.d) : x.v;
}

/** The exact rational value of a finite double. */
function floatToRat(v: number): { n: bigint; d: bigint } {
  let k = 0;
  while (!Number.isInteger(v)) {
    v *= 2; // exact for doubles: a non-integer double is below 2^53
    k++;
  }
  const r = rat(BigInt(v), 1n << BigInt(k));
  return r.exact ? { n: r.n, d: r.d } : { n: 0n, d: 1n };
}

function isInteger(x: Value): x is { exact: true; n: bigint; d: bigint } {
  return x.exact && x.d === 1n;
}

function isZero(x: Value): boolean {
  return x.exact ? x.n === 0n : x.v === 0;
}

function sign(x: Value): number {
  return x.exact ? (x.n > 0n ? 1 : x.n < 0n ? -1 : 0) : Math.sign(x.v);
}

function compare(a: Value, b: Value): number {
  if (a.exact && b.exact) {
    const l = a.n * b.d;
    const r = b.n * a.d;
    return l < r ? -1 : l > r ? 1 : 0;
  }
  const ra = a.exact ? a : floatToRat(a.v);
  const rb = b.exact ? b : floatToRat(b.v);
  const l = ra.n * rb.d;
  const r = rb.n * ra.d;
  return l < r ? -1 : l > r ? 1 : 0;
}

// ---- Arithmetic -------------------------------------------------------------------------------

// Sums and products of reduced fractions reduce with gcds of the smaller parts (Henrici).
function add(a: Value, b: Value): Value {
  if (a.exact && b.exact) {
    if (a.d === 1n && b.d === 1n) return rat(a.n + b.n);
    const g = gcd(a.d, b.d);
    const d = (a.d / g) * b.d;
    if (bitLength(d) - bitLength(g) > MAX_DENOMINATOR_BITS + 1) throw new CalcError(TOO_LARGE);
    const n = a.n * (b.d / g) + b.n * (a.d / g);
    const h = gcd(n, g);
    return reduced(n / h, d / h);
  }
  return float(toNumber(a) + toNumber(b));
}

/** A fraction already in lowest terms with d > 0: only the size is checked. */
function reduced(n: bigint, d: bigint): Value {
  checkSize(n, d);
  return { exact: true, n, d };
}

function neg(a: Value): Value {
  return a.exact ? { exact: true, n: -a.n, d: a.d } : { exact: false, v: -a.v };
}

function mul(a: Value, b: Value): Value {
  if (a.exact && b.exact) {
    const g1 = gcd(a.n, b.d);
    const g2 = gcd(b.n, a.d);
    return reduced((a.n / g1) * (b.n / g2), (a.d / g2) * (b.d / g1));
  }
  return float(toNumber(a) * toNumber(b));
}

function div(a: Value, b: Value): Value {
  if (isZero(b)) throw new CalcError('division by zero');
  if (a.exact && b.exact) return mul(a, b.n < 0n ? { exact: true, n: -b.d, d: -b.n } : { exact: true, n: b.d, d: b.n });
  return float(toNumber(a) / toNumber(b));
}

function floorDiv(n: bigint, d: bigint): bigint {
  // d > 0
  const q = n / d;
  return n < 0n && q * d !== n ? q - 1n : q;
}

/** Modulo with the sign of the divisor (as in Python): a - b*floor(a/b). */
function mod(a: Value, b: Value): Value {
  if (isZero(b)) throw new CalcError('division by zero (modulo by zero)');
  if (a.exact && b.exact) {
    // a/b as a rational, floored, times b, subtracted from a.
    const q = div(a, b) as { exact: true; n: bigint; d: bigint };
    const f = floorDiv(q.n, q.d);
    return add(a, neg(mul(rat(f), b)));
  }
  const x = toNumber(a);
  const y = toNumber(b);
  return float(x - y * Math.floor(x / y));
}

/** Integer k-th root of a non-negative n if n is a perfect k-th power. */
function exactRoot(n: bigint, k: number): bigint | null {
  if (n < 0n) return null;
  if (n < 2n) return n;
  const K = BigInt(k);
  // Newton's method from an upper bound.
  let x = 1n << BigInt(Math.ceil(bitLength(n) / k) + 1);
  for (;;) {
    const y = ((K - 1n) * x + n / x ** (K - 1n)) / K;
    if (y >= x) break;
    x = y;
  }
  return x ** K === n ? x : null;
}

/** base^(p/q) exactly when it is rational (q small), else null. */
function exactRationalPower(base: { n: bigint; d: bigint }, p: bigint, q: bigint): Value | null {
  if (q > 64n) return null;
  const k = Number(q);
  let { n, d } = base;
  if (n < 0n) {
    if (k % 2 === 0) return null; // even root of a negative number: not real
    const r = exactRoot(-n, k);
    const s = exactRoot(d, k);
    if (r === null || s === null) return null;
    n = -r;
    d = s;
  } else {
    const r = exactRoot(n, k);
    const s = exactRoot(d, k);
    if (r === null || s === null) return null;
    n = r;
    d = s;
  }
  return intPower({ exact: true, n, d }, p);
}

/** x^e for an exact x and an integer e, with the size checked before computing. */
function intPower(x: { exact: true; n: bigint; d: bigint }, e: bigint): Value {
  if (e === 0n) return ONE;
  if (x.n === 0n) {
    if (e < 0n) throw new CalcError('division by zero (0 raised to a negative power)');
    return ZERO;
  }
  const ae = abs(e);
  if (x.d === 1n && (x.n === 1n || x.n === -1n)) return rat(x.n === -1n && ae % 2n === 1n ? -1n : 1n);
  // |n|^e has at least e*(bitLength(n)-1) bits: refuse before computing anything huge.
  const lower = (big: bigint) => BigInt(Math.max(bitLength(big) - 1, 0)) * ae;
  const [top, bottom] = e > 0n ? [x.n, x.d] : [x.d, x.n];
  if (lower(top) > BigInt(MAX_BITS) || lower(bottom) > BigInt(MAX_DENOMINATOR_BITS)) throw new CalcError(TOO_LARGE);
  // Powers of a fraction in lowest terms are in lowest terms.
  const n = top ** ae;
  const d = bottom ** ae;
  return d < 0n ? reduced(-n, -d) : reduced(n, d);
}

function power(base: Value, exp: Value): Value {
  if (base.exact && exp.exact) {
    if (exp.d === 1n) return intPower(base, exp.n);
    const exact = exactRationalPower(base, exp.n, exp.d);
    if (exact) return exact;
    // A negative base with an odd root (p/q, q odd) has a real result: (-1)^p * |b|^(p/q).
    if (base.n < 0n && exp.d % 2n === 1n) {
      const magnitude = Math.pow(-toNumber(base), toNumber(exp));
      return float(exp.n % 2n === 0n ? magnitude : -magnitude);
    }
  }
  const b = toNumber(base);
  const e = toNumber(exp);
  if (b === 0 && e < 0) throw new CalcError('division by zero (0 raised to a negative power)');
  if (b < 0 && !Number.isInteger(e)) throw new CalcError('the result is not a real number (a fractional power of a negative number)');
  return float(Math.pow(b, e));
}

/** Factorials computed in the current evaluation (`5000! + 5000! + ...` computes one). */
const factorials = new Map<bigint, bigint>();

function factorial(x: Value, pos: number): Value {
  let n: bigint;
  if (isInteger(x)) n = x.n;
  else if (!x.exact && Number.isInteger(x.v)) n = BigInt(x.v);
  else throw new CalcError('factorial is defined here for non-negative integers only', pos);
  if (n < 0n) throw new CalcError('factorial is defined here for non-negative integers only', pos);
  if (n > BigInt(MAX_FACTORIAL)) throw new CalcError(`factorial argument too large (at most ${MAX_FACTORIAL})`, pos);
  let r = factorials.get(n);
  if (r === undefined) {
    r = 1n;
    for (let i = 2n; i <= n; i++) r *= i;
    factorials.set(n, r);
  }
  return rat(r);
}

/** Natural logarithm of a positive value, also for exact values beyond the double range. */
function lnOf(x: Value): number {
  if (sign(x) <= 0) throw new CalcError('logarithm of a number that is not positive');
  if (!x.exact) return Math.log(x.v);
  const ln = (big: bigint): number => {
    const bits = bitLength(big);
    if (bits <= 1000) return Math.log(Number(big));
    const shift = bits - 64;
    return Math.log(Number(big >> BigInt(shift))) + shift * Math.LN2;
  };
  return ln(x.n) - ln(x.d);
}

/** log_b(x) exactly when x is an integer power of b (both exact), else null. */
function exactLog(x: Value, b: Value): Value | null {
  if (!x.exact || !b.exact) return null;
  const k = Math.round(lnOf(x) / lnOf(b));
  if (!Number.isFinite(k) || Math.abs(k) > MAX_BITS) return null;
  try {
    const p = intPower(b, BigInt(k));
    return compare(p, x) === 0 ? rat(BigInt(k)) : null;
  } catch {
    return null;
  }
}

function roundHalfAwayFromZero(n: bigint, d: bigint): bigint {
  const twice = 2n * abs(n) + d;
  const r = twice / (2n * d);
  return n < 0n ? -r : r;
}

// ---- Functions and constants ------------------------------------------------------------------

interface Fn {
  min: number;
  max: number;
  call(args: Value[], pos: number): Value;
}

const floatFn =
  (f: (x: number) => number, exactAtZero?: Value) =>
  (args: Value[]): Value => {
    const [x] = args;
    if (exactAtZero && x.exact && x.n === 0n) return exactAtZero;
    return float(f(toNumber(x)));
  };

const unitDomain = (f: (x: number) => number) => (args: Value[]) => {
  const v = toNumber(args[0]);
  if (v < -1 || v > 1) throw new CalcError('argument outside [-1, 1]');
  return floatFn(f, ZERO)(args);
};

const FUNCTIONS: Record<string, Fn> = {
  sqrt: {
    min: 1,
    max: 1,
    call: ([x]) => {
      if (sign(x) < 0) throw new CalcError('square root of a negative number is not a real number');
      if (x.exact) {
        const r = exactRationalPower(x, 1n, 2n);
        if (r) return r;
      }
      return float(Math.sqrt(toNumber(x)));
    },
  },
  abs: { min: 1, max: 1, call: ([x]) => (sign(x) < 0 ? neg(x) : x) },
  sin: { min: 1, max: 1, call: floatFn(Math.sin, ZERO) },
  cos: { min: 1, max: 1, call: floatFn(Math.cos, ONE) },
  tan: { min: 1, max: 1, call: floatFn(Math.tan, ZERO) },
  asin: { min: 1, max: 1, call: unitDomain(Math.asin) },
  acos: {
    min: 1,
    max: 1,
    call: (args) => {
      const v = toNumber(args[0]);
      if (v < -1 || v > 1) throw new CalcError('argument outside [-1, 1]');
      return args[0].exact && args[0].n === 1n && args[0].d === 1n ? ZERO : float(Math.acos(v));
    },
  },
  atan: { min: 1, max: 1, call: floatFn(Math.atan, ZERO) },
  ln: {
    min: 1,
    max: 1,
    call: ([x]) => {
      if (x.exact && x.n === 1n && x.d === 1n) return ZERO;
      return float(lnOf(x));
    },
  },
  log: {
    min: 1,
    max: 2,
    call: ([x, b = rat(10n)]) => {
      if (sign(b) <= 0 || compare(b, ONE) === 0) throw new CalcError('logarithm base must be positive and not 1');
      if (sign(x) <= 0) throw new CalcError('logarithm of a number that is not positive');
      return exactLog(x, b) ?? float(lnOf(x) / lnOf(b));
    },
  },
  exp: { min: 1, max: 1, call: floatFn(Math.exp, ONE) },
  floor: { min: 1, max: 1, call: ([x]) => (x.exact ? rat(floorDiv(x.n, x.d)) : float(Math.floor(x.v))) },
  ceil: { min: 1, max: 1, call: ([x]) => (x.exact ? rat(-floorDiv(-x.n, x.d)) : float(Math.ceil(x.v))) },
  round: {
    min: 1,
    max: 2,
    call: ([x, digits], pos) => {
      let places = 0n;
      if (digits !== undefined) {
        if (!isInteger(digits) || abs(digits.n) > 1000n) throw new CalcError('round(x, digits): digits must be an integer between -1000 and 1000', pos);
        places = digits.n;
      }
      const scale = intPower(rat(10n) as { exact: true; n: bigint; d: bigint }, places);
      if (x.exact) {
        const s = mul(x, scale) as { exact: true; n: bigint; d: bigint };
        return div(rat(roundHalfAwayFromZero(s.n, s.d)), scale);
      }
      if (places > 15n) return x; // beyond a double's precision already
      if (places < -308n) return float(0);
      const f = 10 ** Number(places);
      return float((Math.sign(x.v) * Math.round(Math.abs(x.v) * f)) / f);
    },
  },
  min: { min: 1, max: Infinity, call: (args) => args.reduce((m, a) => (compare(a, m) < 0 ? a : m)) },
  max: { min: 1, max: Infinity, call: (args) => args.reduce((m, a) => (compare(a, m) > 0 ? a : m)) },
};

const CONSTANTS: Record<string, Value> = {
  pi: { exact: false, v: Math.PI },
  π: { exact: false, v: Math.PI },
  tau: { exact: false, v: 2 * Math.PI },
  e: { exact: false, v: Math.E },
};

// ---- Lexer ------------------------------------------------------------------------------------

type Token =
  | { kind: 'num'; value: Value; pos: number; text: string }
  | { kind: 'name'; name: string; pos: number; text: string }
  | { kind: 'op'; op: string; pos: number; text: string }
  | { kind: 'end'; pos: number; text: string };

const OPERATOR_ALIASES: Record<string, string> = { '×': '*', '·': '*', '÷': '/', '−': '-' };

function parseNumber(text: string, pos: number): Value {
  const m = /^(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) throw new CalcError(`invalid number '${text}'`, pos);
  const intPart = m[1];
  const frac = m[2] ?? '';
  const exp = m[3] === undefined ? 0 : Number(m[3]);
  const digits = BigInt((intPart + frac).replace(/^0+(?=\d)/, '') || '0');
  const scale = exp - frac.length;
  if (digits === 0n) return ZERO;
  // 10^k has about 3.32*k bits.
  if (!Number.isSafeInteger(exp) || Math.abs(scale) * Math.log2(10) > MAX_BITS + 64) {
    throw new CalcError(`number too large for exact arithmetic: '${text}'`, pos);
  }
  return scale >= 0 ? rat(digits * 10n ** BigInt(scale)) : rat(digits, 10n ** BigInt(-scale));
}

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (/[0-9.]/.test(c)) {
      // digits [. digits] [e [+-] digits]; an 'e' not followed by digits is left for the name 'e'.
      const m = /^(\d*\.?\d*)(?:[eE][+-]?\d+)?/.exec(src.slice(i))!;
      const text = m[0];
      if (text === '.' || text === '') throw new CalcError(`unexpected '${c}'`, start);
      i += text.length;
      tokens.push({ kind: 'num', value: parseNumber(text, start), pos: start, text });
      continue;
    }
    if (/[A-Za-z_π]/.test(c)) {
      const m = /^[A-Za-z_π][A-Za-z_0-9]*/.exec(src.slice(i))!;
      i += m[0].length;
      tokens.push({ kind: 'name', name: m[0].toLowerCase(), pos: start, text: m[0] });
      continue;
    }
    if (c === '*' && src[i + 1] === '*') {
      tokens.push({ kind: 'op', op: '^', pos: start, text: '**' });
      i += 2;
      continue;
    }
    const op = OPERATOR_ALIASES[c] ?? c;
    if ('+-*/%^!(),'.includes(op)) {
      tokens.push({ kind: 'op', op, pos: start, text: c });
      i++;
      continue;
    }
    throw new CalcError(`unexpected character '${c}'`, start);
  }
  tokens.push({ kind: 'end', pos: src.length, text: 'end of expression' });
  return tokens;
}

// ---- Parser / evaluator -----------------------------------------------------------------------

class Parser {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}

  private get t(): Token {
    return this.tokens[this.i];
  }

  private isOp(op: string): boolean {
    const t = this.t;
    return t.kind === 'op' && t.op === op;
  }

  private describe(t: Token): string {
    return t.kind === 'end' ? 'end of expression' : `'${t.text}'`;
  }

  private expect(op: string): void {
    if (!this.isOp(op)) throw new CalcError(`expected '${op}' but found ${this.describe(this.t)}`, this.t.pos);
    this.i++;
  }

  parse(): Value {
    if (this.t.kind === 'end') throw new CalcError('empty expression', 0);
    const v = this.expr();
    const t: Token = this.tokens[this.i]; // not this.t: narrowed by the check above
    if (t.kind !== 'end') {
      const hint = t.kind === 'num' || t.kind === 'name' || this.isOp('(') ? ' (write * for multiplication)' : '';
      throw new CalcError(`unexpected ${this.describe(t)}${hint}`, t.pos);
    }
    return v;
  }

  private expr(): Value {
    let v = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.t as { op: string }).op;
      this.i++;
      const r = this.term();
      v = op === '+' ? add(v, r) : add(v, neg(r));
    }
    return v;
  }

  private term(): Value {
    let v = this.unary();
    while (this.isOp('*') || this.isOp('/') || this.isOp('%')) {
      const { op, pos } = this.t as { op: string; pos: number };
      this.i++;
      const r = this.unary();
      v = at(pos, () => (op === '*' ? mul(v, r) : op === '/' ? div(v, r) : mod(v, r)));
    }
    return v;
  }

  private unary(): Value {
    if (this.isOp('-')) {
      this.i++;
      return neg(this.unary());
    }
    if (this.isOp('+')) {
      this.i++;
      return this.unary();
    }
    return this.power();
  }

  private power(): Value {
    const base = this.postfix();
    if (this.isOp('^')) {
      const pos = this.t.pos;
      this.i++;
      const exp = this.unary(); // right-associative, and 2^-1 works
      return at(pos, () => power(base, exp));
    }
    return base;
  }

  private postfix(): Value {
    let v = this.primary();
    while (this.isOp('!')) {
      v = factorial(v, this.t.pos);
      this.i++;
    }
    return v;
  }

  private primary(): Value {
    const t = this.t;
    if (t.kind === 'num') {
      this.i++;
      return t.value;
    }
    if (this.isOp('(')) {
      this.i++;
      const v = this.expr();
      this.expect(')');
      return v;
    }
    if (t.kind === 'name') {
      this.i++;
      const fn = Object.hasOwn(FUNCTIONS, t.name) ? FUNCTIONS[t.name] : undefined;
      const constant = Object.hasOwn(CONSTANTS, t.name) ? CONSTANTS[t.name] : undefined;
      if (this.isOp('(')) {
        if (!fn) throw new CalcError(constant ? `'${t.text}' is a constant, not a function` : `unknown function '${t.text}'`, t.pos);
        this.i++;
        const args = [this.expr()];
        while (this.isOp(',')) {
          this.i++;
          args.push(this.expr());
        }
        this.expect(')');
        if (args.length < fn.min || args.length > fn.max) {
          const want = fn.min === fn.max ? `${fn.min}` : fn.max === Infinity ? `at least ${fn.min}` : `${fn.min} or ${fn.max}`;
          throw new CalcError(`${t.name}() takes ${want} argument${want === '1' ? '' : 's'}, got ${args.length}`, t.pos);
        }
        return at(t.pos, () => fn.call(args, t.pos), `${t.name}(): `);
      }
      if (constant) return constant;
      if (fn) throw new CalcError(`'${t.text}' is a function: write ${t.name}(...)`, t.pos);
      throw new CalcError(`unknown identifier '${t.text}'`, t.pos);
    }
    throw new CalcError(`unexpected ${this.describe(t)}`, t.pos);
  }
}

/** Gives errors raised without a position the position of the operator or function. */
function at<T>(pos: number, f: () => T, prefix = ''): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof CalcError && e.pos === undefined) throw new CalcError(prefix + e.message, pos);
    throw e;
  }
}

// ---- Formatting -------------------------------------------------------------------------------

/** The exact decimal form of n/d if d has no prime factors but 2 and 5 (and it is short). */
function finiteDecimal(n: bigint, d: bigint): string | null {
  let twos = 0;
  let fives = 0;
  let r = d;
  while (r % 2n === 0n) {
    r /= 2n;
    twos++;
  }
  while (r % 5n === 0n) {
    r /= 5n;
    fives++;
  }
  if (r !== 1n) return null;
  const places = Math.max(twos, fives);
  if (places > MAX_DECIMAL_PLACES) return null;
  const scaled = abs(n) * (10n ** BigInt(places) / d);
  const s = scaled.toString().padStart(places + 1, '0');
  const out = places === 0 ? s : `${s.slice(0, -places)}.${s.slice(-places)}`;
  return (n < 0n ? '-' : '') + out;
}

/** n/d rounded to `digits` significant digits, plain or in scientific notation. */
function approximate(n: bigint, d: bigint, digits = APPROX_DIGITS): string {
  if (n === 0n) return '0';
  const an = abs(n);
  // exponent E with 10^E <= |n/d| < 10^(E+1)
  let E = an.toString().length - d.toString().length;
  if (an * 10n ** BigInt(Math.max(0, -E)) < d * 10n ** BigInt(Math.max(0, E))) E--;
  const shift = digits - 1 - E;
  const num = shift >= 0 ? an * 10n ** BigInt(shift) : an;
  const den = shift >= 0 ? d : d * 10n ** BigInt(-shift);
  let m = roundHalfAwayFromZero(num, den);
  if (m.toString().length > digits) {
    m /= 10n;
    E++;
  }
  let mant = m.toString();
  const sgn = n < 0n ? '-' : '';
  if (E >= -7 && E < 21) {
    if (E >= mant.length - 1) return sgn + mant + '0'.repeat(E - (mant.length - 1));
    if (E >= 0) mant = `${mant.slice(0, E + 1)}.${mant.slice(E + 1)}`;
    else mant = `0.${'0'.repeat(-E - 1)}${mant}`;
    return sgn + mant.replace(/\.?0+$/, '');
  }
  const frac = mant.slice(1).replace(/0+$/, '');
  return `${sgn}${mant[0]}${frac ? `.${frac}` : ''}e${E >= 0 ? '+' : ''}${E}`;
}

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

function format(expression: string, v: Value): CalculatorResult {
  const value = toNumber(v);
  const num = Number.isFinite(value) ? (Object.is(value, -0) ? 0 : value) : null;
  if (!v.exact) {
    const s = String(num ?? value);
    return { expression, result: s, decimal: s, exact: false, value: num };
  }
  if (v.d === 1n) {
    const s = v.n.toString();
    return { expression, result: s, decimal: s, exact: true, value: num };
  }
  const dec = finiteDecimal(v.n, v.d);
  if (dec !== null) return { expression, result: dec, decimal: dec, exact: true, value: num };
  return { expression, result: `${v.n}/${v.d}`, decimal: approximate(v.n, v.d), exact: true, value: num };
}

function pointer(expression: string, pos: number): string {
  if (expression.length > 120 || expression.includes('\n')) return '';
  return `\n  ${expression}\n  ${' '.repeat(pos)}^`;
}

/** Evaluates an expression; throws ToolError('bad_arguments') with the position on any error. */
export function evaluateExpression(expression: string): CalculatorResult {
  gcdBudget = GCD_BUDGET;
  factorials.clear();
  try {
    return format(expression, new Parser(tokenize(expression)).parse());
  } catch (e) {
    if (e instanceof CalcError) {
      const where = e.pos === undefined ? '' : ` at position ${e.pos + 1}`;
      throw new ToolError(`${e.message}${where}${e.pos === undefined ? '' : pointer(expression, e.pos)}`, 'bad_arguments');
    }
    if (e instanceof RangeError) throw new ToolError(`the expression is too large to evaluate: ${e.message}`, 'bad_arguments');
    throw e;
  }
}

function abbreviate(s: string, max = 2000): string {
  if (s.length <= max) return s;
  return `${s.slice(0, 60)}…${s.slice(-60)} (${s.replace(/^-/, '').length} characters)`;
}

export function calculatorTool(): Tool<{ expression: string }> {
  return {
    name: 'calculator',
    description:
      'Evaluates an arithmetic expression exactly where possible (rational arithmetic: 0.1+0.2 = 0.3, 1/3 stays 1/3). ' +
      'Operators: + - * / % ^ (or **, right-associative), unary minus, parentheses, postfix ! (factorial). ' +
      'Constants: pi, e. Functions: sqrt, abs, sin, cos, tan, asin, acos, atan (radians), ln, log (base 10, or log(x, base)), ' +
      'exp, floor, ceil, round (round(x, digits) too), min, max.',
    category: 'math',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        expression: { type: 'string', minLength: 1, maxLength: MAX_EXPRESSION_CHARS, description: 'e.g. "2^100", "(1/3 + 0.5) * 6", "sqrt(2) * sin(pi/4)"' },
      },
      required: ['expression'],
      additionalProperties: false,
    },
    timeoutMs: 5_000,
    costPerUse: 0,
    dangerous: false,
    rateLimitSetting: 'CALCULATOR_RATE_LIMIT',
    retryable: true,
    async run(args): Promise<ToolOutput> {
      const { expression } = args;
      if (typeof expression !== 'string' || expression.trim() === '') throw new ToolError('expression must be a non-empty string', 'bad_arguments');
      if (expression.length > MAX_EXPRESSION_CHARS) throw new ToolError(`expression is longer than ${MAX_EXPRESSION_CHARS} characters`, 'bad_arguments');
      const r = evaluateExpression(expression);
      const approx = r.decimal !== r.result ? ` ≈ ${abbreviate(r.decimal)}` : '';
      const text = `${expression} = ${abbreviate(r.result)}${approx}${r.exact ? '' : ' (floating-point approximation)'}`;
      return { output: r, text };
    },
  };
}
