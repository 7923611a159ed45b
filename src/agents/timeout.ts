/**
 * AGENT_TIMEOUT_SECONDS: the longest one agent's execution may take. An agent runs on a
 * context of its own (`AgentClock.ctx`) whose signal aborts when its time is up: its model
 * call or tool call under way is aborted, no further step starts, nothing cut off is recorded,
 * and the agent fails with `AgentTimedOut` (DEADLINE_EXCEEDED, a message naming the setting),
 * which the workflow's failure handling treats like any other failure of that agent.
 *
 * Durable: the tool loop's deadline is anchored to the start of its first model call, which
 * is journaled with that turn (`Turn.startedAt`), so an activation after a crash or a
 * redelivery continues the same deadline instead of starting a fresh one: time the workflow
 * was down counts, and a deadline that passed meanwhile fails the agent's next live step at
 * once. No journal entry of its own is written for it. Steps already recorded replay whatever
 * the clock says (a finished agent is never failed by a replay). Until the first call is
 * recorded there is nothing to anchor to: a crash during it starts the clock again, like a
 * one-call agent below.
 *
 * Time spent waiting for a person (a tool call held by a tool policy) does not count: when
 * any call of a turn was asked about, the deadline is moved on by the time from the end of
 * that turn's model call (recorded in the turn) to the moment the answers were in, and the new
 * deadline is journaled (`<turn step>-clock`, only then) so every replay uses the same one.
 *
 * A one-call agent (simple mode, a planner, a synthesis, a template step) is one journaled
 * step (its own, or the caller's it runs in): it is run whole or not at all, so its clock
 * starts with the call; a call cut off by a
 * crash runs again with its full time (at most WORKER_MAX_DELIVER times, and always within
 * the task's own TASK_TIMEOUT_SECONDS, which counts from the submission: never forever).
 */
import { AppError, Code } from '../kernel/index.js';
import type { AgentContext } from './context.js';

/** An agent ran past AGENT_TIMEOUT_SECONDS. */
export class AgentTimedOut extends AppError {
  override name = 'AgentTimedOut';
  constructor(agentId: string, timeoutMs: number) {
    super(Code.DeadlineExceeded, `agent ${agentId} timed out: its execution took longer than AGENT_TIMEOUT_SECONDS (${timeoutMs / 1000} s)`);
  }
}

export interface AgentClock {
  /** The agent's context: the parent's, stopped when the agent's time is up. */
  readonly ctx: AgentContext;
  /**
   * Runs `fn` (the asking of a turn's held calls) with the clock stopped; when `asked` says a
   * person was asked, the deadline moves on by the time since `since` (the turn's end) and is
   * journaled under `step`.
   */
  paused<R>(step: string, since: number | undefined, fn: () => Promise<R>, asked: (r: R) => boolean): Promise<R>;
  /** Anchors the deadline to the agent's journaled start (its first turn's `startedAt`). */
  anchor(startedAt: number | undefined): void;
  /** The error to throw for `err`: the timeout when the clock stopped the agent, else `err`. */
  failure(err: unknown): unknown;
  /** Stops the timer (the agent finished or failed). */
  stop(): void;
}

/** Starts an agent's clock: its deadline is `timeoutMs` from now until anchored. */
export function startAgentClock(parent: AgentContext, agentId: string, timeoutMs: number): AgentClock {
  // Built when the agent times out (an error's stack costs more than the rest of a clock).
  let error: AgentTimedOut | undefined;
  const timedOut = () => (error ??= new AgentTimedOut(agentId, timeoutMs));
  // The agent's signal: its own controller, which also follows the parent's abort (a listener
  // removed when the clock stops, rather than AbortSignal.any per agent). Replaced when the
  // deadline moves on after it had passed (a replay reaching a wait for a person): the agent's
  // signal is read afresh by every call.
  let ac = new AbortController();
  const followParent = () => ac.abort(parent.signal.reason);
  if (parent.signal.aborted) followParent();
  else parent.signal.addEventListener('abort', followParent);
  let paused = false;
  const mine = () => !paused && ac.signal.aborted && !parent.signal.aborted;
  let deadline = Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    if (ac.signal.aborted && deadline > Date.now() && !parent.signal.aborted) ac = new AbortController();
    const left = deadline - Date.now();
    const stop = ac;
    if (left <= 0) stop.abort(timedOut());
    // unref: a clock left running never holds the process open (its owner stops it).
    else timer = setTimeout(() => stop.abort(timedOut()), left).unref();
  };
  arm();
  const expired = () => {
    if (mine()) throw timedOut();
  };
  const ctx: AgentContext = {
    step: (name, fn, o) =>
      parent.step(
        name,
        async () => {
          expired();
          try {
            const r = await fn();
            expired(); // finished only after the deadline: not recorded
            return r;
          } catch (err) {
            throw mine() ? timedOut() : err;
          }
        },
        o,
      ),
    isRecorded: (name) => parent.isRecorded(name),
    emit: (type, id, message, payload) => (mine() ? undefined : parent.emit(type, id, message, payload)),
    checkpoint: () => {
      parent.checkpoint();
      expired();
    },
    get signal() {
      return ac.signal;
    },
  };
  return {
    ctx,
    async paused(step, since, fn, asked) {
      // Not checked on the way in: on a replay after a wait the recorded deadline has passed
      // and is moved on below.
      clearTimeout(timer);
      paused = true;
      const left = since === undefined ? undefined : deadline - since;
      try {
        const r = await fn();
        if (left !== undefined && asked(r)) deadline = await parent.step(`${step}-clock`, async () => Date.now() + Math.max(0, left));
        return r;
      } finally {
        paused = false;
        arm();
      }
    },
    anchor(startedAt) {
      if (startedAt === undefined) return;
      deadline = startedAt + timeoutMs;
      arm();
    },
    failure: (err) => (mine() ? timedOut() : err),
    stop: () => {
      clearTimeout(timer);
      parent.signal.removeEventListener('abort', followParent);
    },
  };
}
