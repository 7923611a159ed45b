/**
 * The calculator's evaluator, plain JavaScript because it also runs in a worker thread
 * (./calculator-worker.mjs), which loads no TypeScript loader; types in ./calculator-eval.d.mts.
 *
 * mathjs parses (precedence, associativity, syntax errors) and its fraction.js does the exact
 * rational arithmetic, so 0.1 + 0.2 is 3/10, 1/3*3 is 1 and 2^100 keeps every digit; a value
 * becomes a float only when an irrational function, a constant (pi, e) or a power without an
 * exact result is involved. mathjs's own evaluator is never used: the instance below holds only
 * the parser, so nothing an expression says can reach `import`, `evaluate`, `createUnit` or any
 * other function (mathjs's security advice, taken to its end). A scan before the parse keeps
 * the calculator's language (case-insensitive names, `**`, `×`, no implicit multiplication, no
 * units or keywords) and the positions of its errors; the walk over the tree consumes the same
 * tokens, so a run-time error points at its operator or function.
 *
 * Sizes are capped so that `9^9^9` or `100000!` fail at once instead of running for minutes:
 * an exact numerator has at most MAX_BITS bits, a denominator MAX_DENOMINATOR_BITS, a factorial
 * argument at most MAX_FACTORIAL, and the gcds of one evaluation share a budget; sizes are
 * estimated before a power is computed. The worker's time limit is the last line of defence.
 */
import { BigNumberDependencies, FractionDependencies, create, parseDependencies } from 'mathjs';
import { MAX_BITS, MAX_DENOMINATOR_BITS, MAX_EXPRESSION_CHARS, MAX_FACTORIAL } from './calculator-limits.mjs';
import { finiteDecimal } from './calculator-decimal.mjs';

export { MAX_BITS, MAX_DENOMINATOR_BITS, MAX_EXPRESSION_CHARS, MAX_FACTORIAL };

const math = create({ parseDependencies, FractionDependencies, BigNumberDependencies }, { number: 'number' });
const Fraction = math.Fraction;
/** 20 significant digits, half away from zero: the decimal rendering of a fraction. */
const Approx = math.BigNumber.clone({ precision: 20, rounding: 4, toExpNeg: -8 });
/** Enough digits that rounding to them first does not move the nearest double. */
const Wide = math.BigNumber.clone({ precision: 40 });

/**
 * Work left for gcds in one evaluation, in units of (64-bit digits of a) x (digits of b):
 * Euclid's algorithm is quadratic, and an expression full of large coprime fractions could
 * otherwise take seconds. A million units is well under a second.
 */
const GCD_BUDGET = 1_000_000;

class CalcError extends Error {
  constructor(message, pos) {
    super(message);
    this.pos = pos;
  }
}

/** An error meant for the caller (bad arguments), as opposed to a bug. */
export class ExpressionError extends Error {
  name = 'ExpressionError';
}

// ---- Values: { exact: true, f: Fraction } or { exact: false, v: number } -----------------------

const abs = (x) => (x < 0n ? -x : x);

function bitLength(x) {
  if (x === 0n) return 0;
  const hex = abs(x).toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(parseInt(hex[0], 16)));
}

const digitsOf = (bits) => Math.floor(bits * Math.log10(2)).toLocaleString('en-US');
const TOO_LARGE = `number too large for exact arithmetic (at most ${digitsOf(MAX_BITS)} digits, ${digitsOf(MAX_DENOMINATOR_BITS)} in a denominator)`;

/** Per evaluation: the gcd budget left and the factorials computed (`5000! + 5000!` computes one). */
let budget = GCD_BUDGET;
const factorials = new Map();

/** Charges the gcd fraction.js will run on numbers of these sizes. */
function charge(bitsA, bitsB) {
  if (bitsA <= 64 || bitsB <= 64) return;
  budget -= ((bitsA >> 6) + 1) * ((bitsB >> 6) + 1);
  if (budget < 0) throw new CalcError('the expression needs too much exact arithmetic on huge fractions; simplify it or use smaller numbers');
}

function exact(f) {
  if (bitLength(f.n) > MAX_BITS || bitLength(f.d) > MAX_DENOMINATOR_BITS) throw new CalcError(TOO_LARGE);
  return { exact: true, f };
}

function rat(n, d = 1n) {
  if (d === 0n) throw new CalcError('division by zero');
  charge(bitLength(n), bitLength(d));
  return exact(new Fraction(n, d));
}

function float(v) {
  if (Number.isNaN(v)) throw new CalcError('the result is not a real number');
  if (!Number.isFinite(v)) throw new CalcError('the result is too large (floating-point overflow)');
  return { exact: false, v };
}

const ZERO = rat(0n);
const ONE = rat(1n);
const num = (f) => f.s * f.n;
const isInteger = (x) => x.exact && x.f.d === 1n;
const isZero = (x) => (x.exact ? x.f.n === 0n : x.v === 0);
const sign = (x) => (x.exact ? (x.f.n === 0n ? 0 : Number(x.f.s)) : Math.sign(x.v));
const neg = (x) => (x.exact ? { exact: true, f: x.f.neg() } : { exact: false, v: -x.v });

/** The nearest double (also for fractions beyond the double range: then ±Infinity or 0). */
function toNumber(x) {
  if (!x.exact) return x.v;
  if (x.f.n === 0n) return 0;
  return Number(Wide.div(num(x.f).toString(), x.f.d.toString()));
}

function compare(a, b) {
  if (a.exact && b.exact) return a.f.compare(b.f);
  // fraction.js reads a finite double exactly.
  const fa = a.exact ? a.f : new Fraction(a.v);
  return fa.compare(b.exact ? b.f : new Fraction(b.v));
}

// ---- Arithmetic -------------------------------------------------------------------------------

function add(a, b) {
  if (a.exact && b.exact) {
    charge(bitLength(a.f.n) + bitLength(b.f.d) + 1, bitLength(a.f.d) + bitLength(b.f.d));
    return exact(a.f.add(b.f));
  }
  return float(toNumber(a) + toNumber(b));
}

function mul(a, b) {
  if (a.exact && b.exact) {
    charge(bitLength(a.f.n) + bitLength(b.f.n), bitLength(a.f.d) + bitLength(b.f.d));
    return exact(a.f.mul(b.f));
  }
  return float(toNumber(a) * toNumber(b));
}

function div(a, b) {
  if (isZero(b)) throw new CalcError('division by zero');
  if (a.exact && b.exact) return mul(a, { exact: true, f: b.f.inverse() });
  return float(toNumber(a) / toNumber(b));
}

/** Modulo with the sign of the divisor (as in Python): a - b*floor(a/b). */
function mod(a, b) {
  if (isZero(b)) throw new CalcError('division by zero (modulo by zero)');
  if (a.exact && b.exact) return add(a, neg(mul({ exact: true, f: div(a, b).f.floor() }, b)));
  const x = toNumber(a);
  const y = toNumber(b);
  return float(x - y * Math.floor(x / y));
}

/** Integer k-th root of a non-negative n if n is a perfect k-th power (Newton's method). */
function exactRoot(n, k) {
  if (n < 2n) return n;
  const K = BigInt(k);
  let x = 1n << BigInt(Math.ceil(bitLength(n) / k) + 1);
  for (;;) {
    const y = ((K - 1n) * x + n / x ** (K - 1n)) / K;
    if (y >= x) break;
    x = y;
  }
  return x ** K === n ? x : null;
}

/** base^(p/q) exactly when it is rational (q small), else null. */
function exactRationalPower(base, p, q) {
  if (q > 64n) return null;
  const k = Number(q);
  const { s, n, d } = base.f;
  if (s < 0n && n !== 0n && k % 2 === 0) return null; // even root of a negative number: not real
  const r = exactRoot(n, k);
  const t = r === null ? null : exactRoot(d, k);
  if (t === null) return null;
  return intPower({ exact: true, f: new Fraction(s * r, t) }, p);
}

/** x^e for an exact x and an integer e, with the size checked before computing. */
function intPower(x, e) {
  if (e === 0n) return ONE;
  const { n, d } = x.f;
  if (n === 0n) {
    if (e < 0n) throw new CalcError('division by zero (0 raised to a negative power)');
    return ZERO;
  }
  const ae = abs(e);
  if (d === 1n && n === 1n) return x.f.s < 0n && ae % 2n === 1n ? rat(-1n) : ONE;
  // |n|^e has at least e*(bitLength(n)-1) bits: refuse before computing anything huge.
  const lower = (big) => BigInt(Math.max(bitLength(big) - 1, 0)) * ae;
  const [top, bottom] = e > 0n ? [n, d] : [d, n];
  if (lower(top) > BigInt(MAX_BITS) || lower(bottom) > BigInt(MAX_DENOMINATOR_BITS)) throw new CalcError(TOO_LARGE);
  const s = x.f.s < 0n && ae % 2n === 1n ? -1n : 1n;
  return rat(s * top ** ae, bottom ** ae);
}

function power(base, exp) {
  if (base.exact && exp.exact) {
    if (exp.f.d === 1n) return intPower(base, num(exp.f));
    const r = exactRationalPower(base, num(exp.f), exp.f.d);
    if (r) return r;
    // A negative base with an odd root (p/q, q odd) has a real result: (-1)^p * |b|^(p/q).
    if (base.f.s < 0n && exp.f.d % 2n === 1n) {
      const magnitude = Math.pow(-toNumber(base), toNumber(exp));
      return float(exp.f.n % 2n === 0n ? magnitude : -magnitude);
    }
  }
  const b = toNumber(base);
  const e = toNumber(exp);
  if (b === 0 && e < 0) throw new CalcError('division by zero (0 raised to a negative power)');
  if (b < 0 && !Number.isInteger(e)) throw new CalcError('the result is not a real number (a fractional power of a negative number)');
  return float(Math.pow(b, e));
}

function factorial(x, pos) {
  let n;
  if (isInteger(x)) n = num(x.f);
  else if (!x.exact && Number.isInteger(x.v)) n = BigInt(x.v);
  if (n === undefined || n < 0n) throw new CalcError('factorial is defined here for non-negative integers only', pos);
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
function lnOf(x) {
  if (sign(x) <= 0) throw new CalcError('logarithm of a number that is not positive');
  if (!x.exact) return Math.log(x.v);
  const ln = (big) => {
    const bits = bitLength(big);
    if (bits <= 1000) return Math.log(Number(big));
    const shift = bits - 64;
    return Math.log(Number(big >> BigInt(shift))) + shift * Math.LN2;
  };
  return ln(x.f.n) - ln(x.f.d);
}

/** log_b(x) exactly when x is an integer power of b (both exact), else null. */
function exactLog(x, b) {
  if (!x.exact || !b.exact) return null;
  const k = Math.round(lnOf(x) / lnOf(b));
  if (!Number.isFinite(k) || Math.abs(k) > MAX_BITS) return null;
  try {
    return compare(intPower(b, BigInt(k)), x) === 0 ? rat(BigInt(k)) : null;
  } catch {
    return null;
  }
}

function roundHalfAwayFromZero(n, d) {
  const r = (2n * abs(n) + d) / (2n * d);
  return n < 0n ? -r : r;
}

// ---- Functions and constants ------------------------------------------------------------------

const floatFn = (f, exactAtZero) => (args) => {
  const [x] = args;
  if (exactAtZero && isZero(x) && x.exact) return exactAtZero;
  return float(f(toNumber(x)));
};

function inUnitRange(x) {
  const v = toNumber(x);
  if (v < -1 || v > 1) throw new CalcError('argument outside [-1, 1]');
  return v;
}

const isOne = (x) => x.exact && x.f.n === 1n && x.f.d === 1n && x.f.s > 0n;

const FUNCTIONS = {
  sqrt: [
    1,
    1,
    ([x]) => {
      if (sign(x) < 0) throw new CalcError('square root of a negative number is not a real number');
      return (x.exact && exactRationalPower(x, 1n, 2n)) || float(Math.sqrt(toNumber(x)));
    },
  ],
  abs: [1, 1, ([x]) => (sign(x) < 0 ? neg(x) : x)],
  sin: [1, 1, floatFn(Math.sin, ZERO)],
  cos: [1, 1, floatFn(Math.cos, ONE)],
  tan: [1, 1, floatFn(Math.tan, ZERO)],
  asin: [1, 1, ([x]) => (inUnitRange(x), floatFn(Math.asin, ZERO)([x]))],
  acos: [1, 1, ([x]) => (inUnitRange(x), isOne(x) ? ZERO : float(Math.acos(toNumber(x))))],
  atan: [1, 1, floatFn(Math.atan, ZERO)],
  ln: [1, 1, ([x]) => (isOne(x) ? ZERO : float(lnOf(x)))],
  log: [
    1,
    2,
    ([x, b = rat(10n)]) => {
      if (sign(b) <= 0 || compare(b, ONE) === 0) throw new CalcError('logarithm base must be positive and not 1');
      if (sign(x) <= 0) throw new CalcError('logarithm of a number that is not positive');
      return exactLog(x, b) ?? float(lnOf(x) / lnOf(b));
    },
  ],
  exp: [1, 1, floatFn(Math.exp, ONE)],
  floor: [1, 1, ([x]) => (x.exact ? exact(x.f.floor()) : float(Math.floor(x.v)))],
  ceil: [1, 1, ([x]) => (x.exact ? exact(x.f.ceil()) : float(Math.ceil(x.v)))],
  round: [
    1,
    2,
    ([x, digits], pos) => {
      let places = 0n;
      if (digits !== undefined) {
        if (!isInteger(digits) || abs(num(digits.f)) > 1000n) throw new CalcError('round(x, digits): digits must be an integer between -1000 and 1000', pos);
        places = num(digits.f);
      }
      const scale = intPower(rat(10n), places);
      if (x.exact) {
        const s = mul(x, scale).f;
        return div(rat(roundHalfAwayFromZero(num(s), s.d)), scale);
      }
      if (places > 15n) return x; // beyond a double's precision already
      if (places < -308n) return float(0);
      const f = 10 ** Number(places);
      return float((Math.sign(x.v) * Math.round(Math.abs(x.v) * f)) / f);
    },
  ],
  min: [1, Infinity, (args) => args.reduce((m, a) => (compare(a, m) < 0 ? a : m))],
  max: [1, Infinity, (args) => args.reduce((m, a) => (compare(a, m) > 0 ? a : m))],
};

const CONSTANTS = {
  pi: { exact: false, v: Math.PI },
  π: { exact: false, v: Math.PI },
  tau: { exact: false, v: 2 * Math.PI },
  e: { exact: false, v: Math.E },
};

// ---- Scan: tokens with positions, the checks mathjs's grammar does not make --------------------

const OPERATOR_ALIASES = { '×': '*', '·': '*', '÷': '/', '−': '-' };
const BINARY = new Set(['+', '-', '*', '/', '%', '^']);

/** The exact value of a number literal, refused at once when it is too large to hold. */
function parseNumber(text, pos) {
  const m = /^(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) throw new CalcError(`invalid number '${text}'`, pos);
  const frac = m[2] ?? '';
  const exp = m[3] === undefined ? 0 : Number(m[3]);
  const digits = BigInt((m[1] + frac).replace(/^0+(?=\d)/, '') || '0');
  const scale = exp - frac.length;
  if (digits === 0n) return ZERO;
  // 10^k has about 3.32*k bits.
  if (!Number.isSafeInteger(exp) || Math.abs(scale) * Math.log2(10) > MAX_BITS + 64) {
    throw new CalcError(`number too large for exact arithmetic: '${text}'`, pos);
  }
  return scale >= 0 ? rat(digits * 10n ** BigInt(scale)) : rat(digits, 10n ** BigInt(-scale));
}

const describe = (t) => (t.kind === 'end' ? 'end of expression' : `'${t.text}'`);
const startsValue = (t) => t.kind === 'num' || t.kind === 'name' || t.op === '(';

/** Tokens of the expression, and the text mathjs parses: the same length, so positions agree. */
function scan(src) {
  const tokens = [];
  let text = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const start = i;
    if (/\s/.test(c)) {
      text += ' '; // a newline would start a second expression for mathjs
      i++;
    } else if (/[0-9.]/.test(c)) {
      // digits [. digits] [e [+-] digits]; an 'e' not followed by digits is left for the name 'e'.
      const lexeme = /^(\d*\.?\d*)(?:[eE][+-]?\d+)?/.exec(src.slice(i))[0];
      if (lexeme === '.' || lexeme === '') throw new CalcError(`unexpected '${c}'`, start);
      tokens.push({ kind: 'num', value: parseNumber(lexeme, start), pos: start, text: lexeme });
      text += lexeme;
      i += lexeme.length;
    } else if (/[A-Za-z_π]/.test(c)) {
      const lexeme = /^[A-Za-z_π][A-Za-z_0-9]*/.exec(src.slice(i))[0];
      tokens.push({ kind: 'name', name: lexeme.toLowerCase(), pos: start, text: lexeme });
      text += lexeme.toLowerCase();
      i += lexeme.length;
    } else if (c === '*' && src[i + 1] === '*') {
      tokens.push({ kind: 'op', op: '^', pos: start, text: '**' });
      text += '^ ';
      i += 2;
    } else {
      const op = OPERATOR_ALIASES[c] ?? c;
      if (!'+-*/%^!(),'.includes(op)) throw new CalcError(`unexpected character '${c}'`, start);
      tokens.push({ kind: 'op', op, pos: start, text: c });
      text += op;
      i++;
    }
  }
  tokens.push({ kind: 'end', pos: src.length, text: 'end of expression' });
  check(tokens);
  return { tokens, text };
}

/**
 * What mathjs would read differently: two values side by side (its implicit multiplication, and
 * its keywords and units), `%` with nothing after it (its percentage), and names that are not
 * the calculator's.
 */
function check(tokens) {
  const first = tokens[0];
  if (first.kind === 'end') throw new CalcError('empty expression', 0);
  if (!startsValue(first) && first.op !== '-' && first.op !== '+') throw new CalcError(`unexpected ${describe(first)}`, first.pos);
  const open = []; // per unclosed '(': whether it holds a function's arguments
  for (let k = 0; k < tokens.length - 1; k++) {
    const t = tokens[k];
    const next = tokens[k + 1];
    const call = t.kind === 'name' && next.op === '(';
    if (t.op === '(') open.push(tokens[k - 1]?.kind === 'name');
    if (t.op === ')' && open.pop() === undefined) throw new CalcError(`unexpected ')'`, t.pos);
    if (t.op === ',' && !open.at(-1)) throw new CalcError(open.length > 0 ? `expected ')' but found ','` : `unexpected ','`, t.pos);
    if (t.kind === 'name') {
      const fn = Object.hasOwn(FUNCTIONS, t.name);
      const constant = Object.hasOwn(CONSTANTS, t.name);
      if (call && !fn) throw new CalcError(constant ? `'${t.text}' is a constant, not a function` : `unknown function '${t.text}'`, t.pos);
      if (!call && !constant) throw new CalcError(fn ? `'${t.text}' is a function: write ${t.name}(...)` : `unknown identifier '${t.text}'`, t.pos);
    }
    if (!call && (t.kind === 'num' || t.kind === 'name' || t.op === ')' || t.op === '!') && startsValue(next)) {
      const what = open.length > 0 ? `expected ')' but found ${describe(next)}` : `unexpected ${describe(next)} (write * for multiplication)`;
      throw new CalcError(what, next.pos);
    }
    const operandMissing = (BINARY.has(t.op) || t.op === '(' || t.op === ',') && !startsValue(next) && next.op !== '-' && next.op !== '+';
    if (operandMissing) throw new CalcError(`unexpected ${describe(next)}`, next.pos);
  }
  const end = tokens[tokens.length - 1];
  if (open.length > 0) throw new CalcError(`expected ')' but found end of expression`, end.pos);
}

/** mathjs's syntax error, in the calculator's words, at the token it names. */
function syntaxError(e, tokens) {
  const at = typeof e.char === 'number' ? e.char - 1 : 0;
  const t = tokens.find((x) => x.pos >= at) ?? tokens[tokens.length - 1];
  if (/^Parenthesis \) expected/.test(e.message)) return new CalcError(`expected ')' but found ${describe(t)}`, t.pos);
  return new CalcError(`unexpected ${describe(t)}`, t.pos);
}

// ---- Evaluation: a walk over mathjs's tree, consuming the tokens in source order ---------------

const BINARY_FN = { add, subtract: (a, b) => add(a, neg(b)), multiply: mul, dotMultiply: mul, divide: div, dotDivide: div, mod, pow: power, dotPow: power };
const SYMBOL = { add: '+', subtract: '-', multiply: '*', dotMultiply: '*', divide: '/', dotDivide: '/', mod: '%', pow: '^', dotPow: '^' };
const isNum = (t) => t.kind === 'num';
const isName = (t) => t.kind === 'name';
const isOp = (op) => (t) => t.op === op;

/** Gives errors raised without a position the position of the operator or function. */
function at(pos, f, prefix = '') {
  try {
    return f();
  } catch (e) {
    if (e instanceof CalcError && e.pos === undefined) throw new CalcError(prefix + e.message, pos);
    throw e;
  }
}

function evaluate(node, tokens) {
  let k = 0;
  /** The next token; one the tree does not account for means mathjs read the text differently. */
  const take = (fits) => {
    const t = tokens[k];
    if (!fits(t)) throw new CalcError(`unexpected ${describe(t)}`, t.pos);
    k++;
    return t;
  };
  const walk = (n) => {
    switch (n.type) {
      case 'ConstantNode':
        return take(isNum).value;
      case 'SymbolNode':
        return CONSTANTS[take(isName).name];
      case 'ParenthesisNode': {
        take(isOp('('));
        const v = walk(n.content);
        take(isOp(')'));
        return v;
      }
      case 'FunctionNode': {
        const t = take(isName);
        take(isOp('('));
        const args = n.args.map((a, i) => (i > 0 && take(isOp(',')), walk(a)));
        take(isOp(')'));
        const [min, max, call] = FUNCTIONS[t.name];
        if (args.length < min || args.length > max) {
          const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} or ${max}`;
          throw new CalcError(`${t.name}() takes ${want} argument${want === '1' ? '' : 's'}, got ${args.length}`, t.pos);
        }
        return at(t.pos, () => call(args, t.pos), `${t.name}(): `);
      }
      case 'OperatorNode': {
        if (n.fn === 'unaryMinus' || n.fn === 'unaryPlus') {
          take(isOp(n.fn === 'unaryMinus' ? '-' : '+'));
          const v = walk(n.args[0]);
          return n.fn === 'unaryMinus' ? neg(v) : v;
        }
        if (n.fn === 'factorial') {
          const v = walk(n.args[0]);
          return factorial(v, take(isOp('!')).pos);
        }
        const f = BINARY_FN[n.fn];
        if (f && n.args.length === 2) {
          const a = walk(n.args[0]);
          const { pos } = take(isOp(SYMBOL[n.fn]));
          const b = walk(n.args[1]);
          // Sums carry no position (the calculator never gave them one).
          return n.fn === 'add' || n.fn === 'subtract' ? f(a, b) : at(pos, () => f(a, b));
        }
      }
    }
    const t = tokens[Math.min(k, tokens.length - 1)];
    throw new CalcError(`unexpected ${describe(t)}`, t.pos);
  };
  const v = walk(node);
  take((t) => t.kind === 'end');
  return v;
}

// ---- Formatting -------------------------------------------------------------------------------

function format(expression, x) {
  const value = toNumber(x);
  const v = Number.isFinite(value) ? (Object.is(value, -0) ? 0 : value) : null;
  if (!x.exact) {
    const s = String(v ?? value);
    return { expression, result: s, decimal: s, exact: false, value: v };
  }
  const n = num(x.f);
  const dec = x.f.d === 1n ? n.toString() : finiteDecimal(n, x.f.d);
  if (dec !== null) return { expression, result: dec, decimal: dec, exact: true, value: v };
  return { expression, result: `${n}/${x.f.d}`, decimal: Approx.div(n.toString(), x.f.d.toString()).toString(), exact: true, value: v };
}

function pointer(expression, pos) {
  if (expression.length > 120 || expression.includes('\n')) return '';
  return `\n  ${expression}\n  ${' '.repeat(pos)}^`;
}

/** Evaluates an expression; throws ExpressionError, with the position, on any error of the expression. */
export function evaluateExpression(expression) {
  budget = GCD_BUDGET;
  factorials.clear();
  try {
    const { tokens, text } = scan(expression);
    let tree;
    try {
      tree = math.parse(text);
    } catch (e) {
      throw syntaxError(e, tokens);
    }
    return format(expression, evaluate(tree, tokens));
  } catch (e) {
    if (e instanceof CalcError) {
      const where = e.pos === undefined ? '' : ` at position ${e.pos + 1}${pointer(expression, e.pos)}`;
      throw new ExpressionError(`${e.message}${where}`);
    }
    if (e instanceof RangeError) throw new ExpressionError(`the expression is too large to evaluate: ${e.message}`);
    throw e;
  } finally {
    factorials.clear();
  }
}
