/**
 * Groups of parallel work that fail as one: on the first failure no member starts any more,
 * the running ones are aborted (their scoped context), and the failure propagates only once
 * every member has settled, so nothing of the group still runs (or emits) when the caller
 * moves on. A member that waits for a person (the runtime's Passivate, marked `passivates`)
 * is not a failure of the others: no member starts any more, the running ones finish their
 * work (so nothing they did is cut off and done again), and then the wait propagates. The
 * concurrency limit is p-limit's.
 */
import pLimit from 'p-limit';
import { scopedContext, type AgentContext } from './context.js';

export interface ParallelGroup {
  /** The members' context: stopped when a member fails (and when the parent is). */
  readonly ctx: AgentContext;
  /** Runs `fn` once one of the group's slots is free; after a failure in the group it does not start. */
  run<R>(fn: (ctx: AgentContext) => Promise<R>): Promise<R>;
  /** Awaits every member; if any failed, throws the group's first failure once all have settled. */
  all<R>(members: Promise<R>[]): Promise<R[]>;
}

/** The workflow must wait for a person (runtime/wait.ts `Passivate`). */
const waits = (err: unknown): boolean => typeof err === 'object' && err !== null && (err as { passivates?: unknown }).passivates === true;

/** A group of at most `n` members running at once. */
export function parallelGroup(parent: AgentContext, n: number): ParallelGroup {
  const { ctx, abort } = scopedContext(parent);
  const limit = pLimit(Math.max(1, Math.trunc(n) || 1));
  let failure: { err: unknown } | undefined;
  // Recorded where the member fails, not where its promise is observed: p-limit hands the freed
  // slot to the next queued member before any awaiting caller hears of the failure, and that
  // member must already find the group stopped.
  const fail = (err: unknown) => {
    if (failure && !(waits(failure.err) && !waits(err))) return;
    failure = { err };
    if (!waits(err)) abort(err);
  };
  return {
    ctx,
    run: (fn) =>
      limit(async () => {
        if (failure) throw failure.err;
        try {
          return await fn(ctx);
        } catch (err) {
          fail(err);
          throw err;
        }
      }),
    async all<R>(members: Promise<R>[]): Promise<R[]> {
      const settled = await Promise.allSettled(
        members.map((p) =>
          p.catch((err: unknown) => {
            fail(err);
            throw err;
          }),
        ),
      );
      if (failure) throw failure.err;
      return settled.map((r) => (r as PromiseFulfilledResult<R>).value);
    },
  };
}

/** Runs `fn` over `items` in one group of at most `n` at a time, keeping the order of results. */
export function runLimited<T, R>(parent: AgentContext, items: readonly T[], n: number, fn: (ctx: AgentContext, x: T, i: number) => Promise<R>): Promise<R[]> {
  const g = parallelGroup(parent, n);
  return g.all(items.map((x, i) => g.run((ctx) => fn(ctx, x, i))));
}
