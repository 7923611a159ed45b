// startAgentClock (./timeout.ts): the agent's signal follows the workflow's (its reason), the
// agent's own timeout aborts only the agent's, and a stopped clock leaves no listener behind.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { EphemeralContext } from './context.js';
import { AgentTimedOut, startAgentClock } from './timeout.js';

describe('startAgentClock', () => {
  it("aborts the agent's signal with the workflow's reason, and removes its listener when stopped", () => {
    const parent = new EphemeralContext();
    const clocks = Array.from({ length: 20 }, (_, i) => startAgentClock(parent, `a${i}`, 60_000));
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(20);
    clocks.slice(1).forEach((c) => c.stop());
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    const reason = new Error('cancelled');
    parent.abort.abort(reason);
    expect(clocks[0].ctx.signal.aborted).toBe(true);
    expect(clocks[0].ctx.signal.reason).toBe(reason);
    // Not the agent's timeout: its failure is the workflow's.
    expect(clocks[0].failure(reason)).toBe(reason);
    clocks[0].stop();
  });

  it("times out the agent alone: the workflow's signal stays live", async () => {
    const parent = new EphemeralContext();
    const clock = startAgentClock(parent, 'slow', 20);
    await new Promise((r) => setTimeout(r, 60));
    expect(clock.ctx.signal.aborted).toBe(true);
    expect(clock.ctx.signal.reason).toBeInstanceOf(AgentTimedOut);
    expect(parent.signal.aborted).toBe(false);
    expect(clock.failure(new Error('aborted'))).toBeInstanceOf(AgentTimedOut);
    clock.stop();
  });
});
