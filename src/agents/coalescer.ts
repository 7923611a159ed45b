/**
 * Model text to LLM_PARTIAL events: few enough events for a fast model, soon enough for a slow one.
 */

/** How long the first text of a stream may wait for more (ms). */
const FIRST_FLUSH_MS = 5;

/**
 * Streams deltas as LLM_PARTIAL events: up to `chunk` characters each, and never holding text
 * back longer than `flushMs` (a slow model's words reach clients as they come); the first text
 * of a stream waits at most FIRST_FLUSH_MS, so the time to the first token is not the window.
 */
export class DeltaCoalescer {
  private buf = '';
  private timer?: NodeJS.Timeout;
  private started = false;
  constructor(
    private readonly send: (piece: string) => void,
    private readonly chunk: number,
    private readonly flushMs: number,
  ) {}
  push(delta: string): void {
    this.buf += delta;
    if (this.buf.length >= this.chunk && !this.started) {
      // Text comes fast: whole chunks from here on, the first-text timer gives way to the window.
      this.started = true;
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.buf.length >= this.chunk) {
      // Never split a surrogate pair (an emoji) across two events.
      let n = this.chunk;
      const c = this.buf.charCodeAt(n - 1);
      if (c >= 0xd800 && c <= 0xdbff) n = n > 1 ? n - 1 : n + 1;
      if (n > this.buf.length) break;
      this.send(this.buf.slice(0, n));
      this.buf = this.buf.slice(n);
    }
    // The first text waits at most FIRST_FLUSH_MS: long enough for a fast model to fill whole
    // chunks, short enough that a slow model's first token is not kept for the whole window.
    const wait = this.started ? this.flushMs : Math.min(this.flushMs, FIRST_FLUSH_MS);
    if (this.buf && !this.timer) this.timer = setTimeout(() => this.flush(), wait);
  }
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.buf) return;
    this.started = true;
    const piece = this.buf;
    this.buf = '';
    this.send(piece);
  }
}
