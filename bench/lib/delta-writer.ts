/**
 * The live benchmark's reference and floor servers write tokens as the service's delta frames
 * (`event: thread.message.delta`, numbered ids), coalesced like the service's: what arrives
 * within FLUSH_MS of the first pending text goes out as one frame.
 */
import type { ServerResponse } from 'node:http';

/** The service's flush bound (agents/model-turn.ts: the coalescer's default window). */
export const FLUSH_MS = 50;

export class DeltaWriter {
  private pending = '';
  private id = 0;
  private timer?: NodeJS.Timeout;

  constructor(private readonly res: ServerResponse) {}

  push(text: string): void {
    this.pending += text;
    this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending) return;
    this.res.write(`id: ${++this.id}\nevent: thread.message.delta\ndata: {"type":"LLM_PARTIAL","delta":"${this.pending}"}\n\n`);
    this.pending = '';
  }

  /** Writes what is pending, then the stream's end. */
  end(): void {
    this.flush();
    this.res.end('event: done\ndata: [DONE]\n\n');
  }

  /** The client went away: nothing more is written. */
  drop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = '';
  }
}
