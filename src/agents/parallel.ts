/**
 * Groups of parallel work that fail as one: on the first failure the rest of the group is
 * aborted and awaited before the failure propagates, so nothing of the group still runs (or
 * emits) when the caller moves on. Concurrency limits are p-limit's.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { scopedContext, type AgentContext } from './context.js';

/**
 * Awaits every promise; on the first failure aborts the rest (`abort`) and waits for all of
 * them to settle before throwing it, so nothing of the group still runs when the caller moves on.
 */
export async function allOrStop<T>(ps: Promise<T>[], abort: (reason: unknown) => void): Promise<T[]> {
  let first: { err: unknown } | undefined;
  const watched = ps.map((p) =>
    p.catch((err: unknown) => {
      if (!first) {
        first = { err };
        abort(err);
      }
      throw err;
    }),
  );
  const settled = await Promise.allSettled(watched);
  if (first) throw first.err;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/**
 * A limit of `n` at a time whose queue can be dropped: `clearQueue()` rejects what has not
 * started, so a group that failed starts nothing new and still settles every member.
 */
export function slots(n: number): LimitFunction {
  return pLimit({ concurrency: Math.max(1, Math.trunc(n) || 1), rejectOnClear: true });
}

/**
 * Runs `fn` over `items`, at most `n` at a time, keeping the order of results, in one scoped
 * context: on the first failure no new item starts, the running ones are stopped, and the
 * failure is thrown once all have settled.
 */
export async function runLimited<T, R>(
  parent: AgentContext,
  items: readonly T[],
  n: number,
  fn: (ctx: AgentContext, x: T, i: number) => Promise<R>,
): Promise<R[]> {
  const { ctx, abort } = scopedContext(parent);
  const limit = slots(n);
  return allOrStop(
    items.map((x, i) => limit(() => fn(ctx, x, i))),
    (reason) => {
      abort(reason);
      limit.clearQueue();
    },
  );
}
