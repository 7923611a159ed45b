/**
 * Fixed-rate bursts for N channels (workflows), phases spread evenly so the channels do not
 * all fire in the same turn. Driven by a 1 ms timer against the monotonic clock; a late
 * tick catches up, but never more than `maxCatchUp` bursts per channel at once.
 */
export class RateScheduler {
  private timer?: NodeJS.Timeout;
  private t0 = 0;
  private done: Float64Array;
  running = false;
  bursts = 0;

  constructor(
    private readonly channels: number,
    private readonly burstsPerSec: number,
    private readonly onBurst: (channel: number) => void,
    private readonly maxCatchUp = 50,
  ) {
    this.done = new Float64Array(channels);
  }

  start(): void {
    this.running = true;
    this.t0 = performance.now();
    this.done.fill(0);
    const tick = () => {
      if (!this.running) return;
      const elapsed = (performance.now() - this.t0) / 1000;
      for (let i = 0; i < this.channels; i++) {
        const due = Math.floor(elapsed * this.burstsPerSec + i / this.channels) - this.done[i];
        const n = Math.min(due, this.maxCatchUp);
        for (let k = 0; k < n; k++) this.onBurst(i);
        this.done[i] += due; // skipped bursts beyond maxCatchUp are dropped, not queued
        this.bursts += n;
      }
      this.timer = setTimeout(tick, 1);
    };
    tick();
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
  }
}
