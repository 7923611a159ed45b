// encodeEvent (./streams.ts): an event decoded from its NATS message reuses its JSON text, and
// its SSE frame is byte for byte what serialising the decoded event gives.
import { describe, expect, it } from 'vitest';
import { encodeEvent as encodeBusEvent, type WorkflowEvent } from '../bus/index.js';
import { decodeArrived, encodeEvent } from './streams.js';

const base = { workflow_id: 'wf-1', agent_id: 'a', timestamp: '2026-11-26T05:00:00.000Z' };
const events: WorkflowEvent[] = [
  { ...base, seq: 1, stream_id: '1-1', type: 'WORKFLOW_STARTED', message: 'started' },
  { ...base, seq: 2, stream_id: '1-2', type: 'LLM_PARTIAL', message: 'héllo "wörld" 🎉\n', payload: { delta: 'héllo "wörld" 🎉\n', final_answer: true } },
  { ...base, seq: 3, stream_id: '1-3', type: 'LLM_PARTIAL', message: '' },
  { ...base, seq: 4, stream_id: '1-4', type: 'WORKFLOW_COMPLETED', message: 'done', payload: { result: { nested: [1, 2, { x: null }] } } },
];

describe('encodeEvent', () => {
  it('gives the same frame for an event that arrived as JSON text as for the event itself', () => {
    for (const e of events) {
      const arrived = decodeArrived(encodeBusEvent(e));
      const a = encodeEvent(arrived);
      const b = encodeEvent(structuredClone(e));
      expect(a.json).toBe(b.json);
      expect(a.frame.equals(b.frame)).toBe(true);
      expect(JSON.parse(a.json)).toEqual(e.type === 'LLM_PARTIAL' ? { ...e, delta: e.message } : e);
    }
  });
});
