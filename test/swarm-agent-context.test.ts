/**
 * SwarmAgentContext: a message a tool call sends is credited to that call's step (its id and the
 * journal's count of send_message calls), also when tool steps run side by side
 * (TOOL_PARALLELISM > 1): the step is found by the call's arguments object, which its step's
 * TOOL_INVOKED carries.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { JournalLog, PipelinedPublisher } from '../src/bus/index.js';
import { SwarmAgentContext } from '../src/swarm/agent-context.js';
import { LEAD, type Mailboxes } from '../src/swarm/index.js';

function harness() {
  const sent: { id: string; text: string }[] = [];
  const journaled: { step: string; entry: Record<string, unknown> }[] = [];
  const journal = {
    subject: () => 'journal',
    encode: (step: string, entry: Record<string, unknown>) => {
      journaled.push({ step, entry });
      return new Uint8Array();
    },
    read: async () => new Map(),
  } as unknown as JournalLog;
  const publisher = { publish: async () => ({}) } as unknown as PipelinedPublisher;
  const mail = {
    send: async (_wf: string, _to: string, m: { kind: string; text?: string }, id: string) => {
      if (m.kind === 'text') sent.push({ id, text: m.text ?? '' });
    },
  } as unknown as Mailboxes;
  const ctx = new SwarmAgentContext({ workflowId: 'wf', name: 'agent-1', journal, publisher, mail });
  return { ctx, sent, journaled };
}

/** A tool step as the tool loop runs one: TOOL_INVOKED with the call's arguments first, then the tool (after `delayMs`) with the same object. */
function toolStep(ctx: SwarmAgentContext, step: string, delayMs: number, send?: string) {
  const args = { to: LEAD, text: send ?? '' };
  return ctx.step(step, async () => {
    ctx.emit('TOOL_INVOKED', 'agent-1', 'Calling a tool', { tool: 'x', arguments: args });
    await sleep(delayMs);
    expect(ctx.sentInStep(args)).toBe(0);
    if (send !== undefined) {
      void ctx.send(LEAD, { kind: 'text', from: 'agent-1', text: send }, true, args);
      expect(ctx.sentInStep(args)).toBe(1);
    }
    return step;
  });
}

describe('SwarmAgentContext sends', () => {
  it("credits a tool call's send to its own step while a tool step opened later is still open", async () => {
    const { ctx, sent, journaled } = harness();
    await Promise.all([toolStep(ctx, 'tool-a', 20, 'from a'), toolStep(ctx, 'tool-b', 60)]);
    expect(sent).toEqual([{ id: 'wf:agent-1:tool-a:0', text: 'from a' }]);
    expect(journaled).toEqual([
      { step: 'tool-a', entry: { result: 'tool-a', mail: 1 } },
      { step: 'tool-b', entry: { result: 'tool-b' } },
    ]);
    expect(ctx.messagesSent).toBe(1);
  });

  it('three tool steps side by side, each sending once: each send under its own step', async () => {
    const { ctx, sent, journaled } = harness();
    await Promise.all([toolStep(ctx, 'tool-a', 40, 'a'), toolStep(ctx, 'tool-b', 10, 'b'), toolStep(ctx, 'tool-c', 25, 'c')]);
    expect(sent.map((s) => [s.id, s.text])).toEqual([
      ['wf:agent-1:tool-b:0', 'b'],
      ['wf:agent-1:tool-c:0', 'c'],
      ['wf:agent-1:tool-a:0', 'a'],
    ]);
    expect(journaled.map((j) => [j.step, j.entry.mail])).toEqual([
      ['tool-b', 1],
      ['tool-c', 1],
      ['tool-a', 1],
    ]);
    expect(ctx.messagesSent).toBe(3);
  });

  it('without a call, a send belongs to the newest step open; outside any step it is refused', async () => {
    const { ctx, sent } = harness();
    await ctx.step('outer', async () => {
      await ctx.step('inner', async () => {
        void ctx.send(LEAD, { kind: 'text', from: 'agent-1', text: 'inner' }, true);
        return 1;
      });
      void ctx.send(LEAD, { kind: 'text', from: 'agent-1', text: 'outer' }, true);
      return 2;
    });
    expect(sent.map((s) => s.id)).toEqual(['wf:agent-1:inner:0', 'wf:agent-1:outer:0']);
    expect(() => ctx.send(LEAD, { kind: 'text', from: 'agent-1', text: 'outside' })).toThrow(/only be sent inside a step/);
  });
});
