/**
 * Steps to undo, run last-in first-out: what was opened first closes last. A failing step is
 * logged and the others still run, so one broken resource never keeps the rest open.
 */
import type { Logger } from '../kernel/index.js';

export class Teardown {
  private readonly steps: (() => Promise<unknown> | unknown)[] = [];
  constructor(private readonly log: Logger) {}

  push(step: () => Promise<unknown> | unknown): void {
    this.steps.push(step);
  }

  async run(): Promise<void> {
    for (let step = this.steps.pop(); step; step = this.steps.pop()) {
      try {
        await step();
      } catch (err) {
        this.log.warn({ err }, 'shutdown step failed');
      }
    }
  }
}
