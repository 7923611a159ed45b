/**
 * How many calls of one caller may wait for their tasks at once on one gateway process. A
 * waiting call holds an open HTTP response and a subscription to the task's event feed for up
 * to its timeout; without a cap one key could hold any number of them (one request each, so
 * the per-key rate limit alone lets dozens pile up within a minute).
 */
import { AppError, Code } from '../kernel/index.js';

/** Concurrent waits per caller on one gateway process. */
export const MAX_WAITS_PER_CALLER = 10;

export class WaitLimit {
  private readonly held = new Map<string, number>();

  constructor(readonly max = MAX_WAITS_PER_CALLER) {}

  /** Takes one of `key`'s waits (a public limit error when all are taken); the returned function gives it back, once. */
  claim(key: string): () => void {
    const n = this.held.get(key) ?? 0;
    if (n >= this.max) {
      throw new AppError(
        Code.ResourceExhausted,
        `too many waiting calls: at most ${this.max} of yours may wait at once; submit with wait: false and read the task with get_task`,
      );
    }
    this.held.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    };
  }
}
