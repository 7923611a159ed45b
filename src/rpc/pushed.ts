/**
 * A server stream fed by a producer that pushes: `produce` runs at once, and what it pushes is
 * yielded in order as the client reads; after the last item its failure, if any, is thrown.
 * Shared by the streaming RPCs (LLMService.StreamComplete, AgentService.StreamExecuteTask).
 */
export async function* pushed<T>(produce: (push: (item: T) => void) => Promise<void>): AsyncGenerator<T> {
  const queue: T[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let failed = false;
  let failure: unknown;
  const push = (item: T) => {
    queue.push(item);
    wake?.();
  };
  void produce(push)
    .catch((err: unknown) => {
      failed = true;
      failure = err;
    })
    .finally(() => {
      done = true;
      wake?.();
    });
  for (;;) {
    while (queue.length) yield queue.shift()!;
    if (done) break;
    await new Promise<void>((r) => (wake = r));
    wake = undefined;
  }
  if (failed) throw failure;
}
