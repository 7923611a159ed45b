/** SQLSTATE classes 22 (data exception) and 23 (integrity constraint): caused by one row's values. */
const isDataError = (err: unknown) => /^2[23]/.test(String((err as { code?: unknown })?.code ?? ''));

/**
 * Coalesces calls made in the same tick into one multi-row statement. When a batch fails on a
 * row's data (e.g. an invalid uuid), its items are retried one by one so that only the bad
 * item's caller gets the error, not every caller that happened to share its tick.
 */
export class Batcher<T> {
  private pending: { item: T; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;
  constructor(
    private readonly flushFn: (items: T[]) => Promise<void>,
    private readonly maxBatch = 500,
  ) {}
  push(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }
  private async flush(): Promise<void> {
    this.scheduled = false;
    while (this.pending.length) {
      const batch = this.pending.splice(0, this.maxBatch);
      try {
        await this.flushFn(batch.map((b) => b.item));
        batch.forEach((b) => b.resolve());
      } catch (err) {
        if (batch.length > 1 && isDataError(err)) {
          await Promise.all(batch.map((b) => this.flushFn([b.item]).then(b.resolve, b.reject)));
        } else {
          batch.forEach((b) => b.reject(err));
        }
      }
    }
  }
}
