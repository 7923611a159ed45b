/**
 * Latency histogram in microseconds: 10 µs buckets up to 100 ms, 1 ms buckets up to 10 s,
 * then an overflow count. Constant memory however many samples are recorded.
 */
const FINE = 10_000; // 10 µs x 10,000 = 100 ms
const COARSE = 9_900; // 1 ms x 9,900 = 100 ms .. 10 s

export interface Percentiles {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  /** Samples below zero (clock skew; clamped to 0). */
  negative: number;
}

export class Histogram {
  private b = new Uint32Array(FINE + COARSE + 1);
  count = 0;
  sum = 0;
  max = 0;
  negative = 0;

  record(us: number): void {
    if (us < 0) {
      this.negative++;
      us = 0;
    }
    let i: number;
    if (us < 100_000) i = (us / 10) | 0;
    else if (us < 10_000_000) i = FINE + (((us - 100_000) / 1000) | 0);
    else i = FINE + COARSE;
    this.b[i]++;
    this.count++;
    this.sum += us;
    if (us > this.max) this.max = us;
  }

  recordN(us: number, n: number): void {
    for (let k = 0; k < n; k++) this.record(us);
  }

  reset(): void {
    this.b.fill(0);
    this.count = 0;
    this.sum = 0;
    this.max = 0;
    this.negative = 0;
  }

  /** Upper edge of the bucket holding the q-quantile, in µs. */
  quantile(q: number): number {
    if (!this.count) return NaN;
    const target = Math.ceil(q * this.count);
    let acc = 0;
    for (let i = 0; i < this.b.length; i++) {
      acc += this.b[i];
      if (acc >= target) {
        if (i < FINE) return (i + 1) * 10;
        if (i < FINE + COARSE) return 100_000 + (i - FINE + 1) * 1000;
        return this.max;
      }
    }
    return this.max;
  }

  summary(): Percentiles {
    return {
      count: this.count,
      p50: this.quantile(0.5),
      p90: this.quantile(0.9),
      p99: this.quantile(0.99),
      p999: this.quantile(0.999),
      max: this.max,
      mean: this.count ? this.sum / this.count : NaN,
      negative: this.negative,
    };
  }
}

/** Exact percentiles of a small sample set (µs). */
export function percentilesOf(samples: number[]): Percentiles {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] : NaN);
  return {
    count: s.length,
    p50: q(0.5),
    p90: q(0.9),
    p99: q(0.99),
    p999: q(0.999),
    max: s.length ? s[s.length - 1] : NaN,
    mean: s.length ? s.reduce((a, b) => a + b, 0) / s.length : NaN,
    negative: s.filter((x) => x < 0).length,
  };
}
