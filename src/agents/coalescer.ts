/**
 * Model text to LLM_PARTIAL events: few enough events for a fast model, soon enough for a slow one.
 */

/**
 * Streams deltas as LLM_PARTIAL events: up to `chunk` characters each, and never holding text
 * back longer than `flushMs` (a slow model's words reach clients as they come). The first text
 * of a stream is not held for a timer: it goes out once the current turn of the event loop has
 * read what arrived with it (setImmediate), so the time to the first token is the model's, and
 * a burst read at once still becomes whole chunks. After that, text waits up to `flushMs`.
 */
export class DeltaCoalescer {
  private buf = '';
  private timer?: NodeJS.Timeout;
  private first?: NodeJS.Immediate;
  private started = false;
  constructor(
    private readonly send: (piece: string) => void,
    private readonly chunk: number,
    private readonly flushMs: number,
  ) {}
  push(delta: string): void {
    this.buf += delta;
    if (this.buf.length >= this.chunk && !this.started) {
      // Text comes fast: whole chunks from here on, the first text's flush gives way to the window.
      this.started = true;
      clearImmediate(this.first);
      this.first = undefined;
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
    if (!this.buf) return;
    if (!this.started) this.first ??= setImmediate(() => this.flush());
    else this.timer ??= setTimeout(() => this.flush(), this.flushMs);
  }
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    clearImmediate(this.first);
    this.first = undefined;
    if (!this.buf) return;
    this.started = true;
    const piece = this.buf;
    this.buf = '';
    this.send(piece);
  }
}
