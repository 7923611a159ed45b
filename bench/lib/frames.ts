/**
 * The event used by the fan-out benchmark and the byte patterns the clients look for.
 *
 * Every event carries its publish time `pt` in its payload: microseconds of the machine's
 * monotonic clock (process.hrtime, CLOCK_MONOTONIC, the same in every process on the
 * machine), as a 16-digit string so every frame has the same size and the client can read it
 * without parsing JSON. The reference servers send the very frame the gateway would send
 * for such an event (built with the gateway's own encoder), with `pt` patched in per write.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowEvent } from '../../src/bus/events.js';

export const PT_DIGITS = 16;
/** One streamed LLM delta of the offline provider's chunk size (48 characters). */
export const BENCH_MESSAGE = 'The quick brown fox jumps over the lazy dog. 0123'.slice(0, 48);

export const fmtPt = (us: number) => String(Math.floor(us)).padStart(PT_DIGITS, '0');

export function benchEvent(workflowId: string, seq: number, ptUs: number, ms = Date.now()): WorkflowEvent {
  return {
    workflow_id: workflowId,
    seq,
    stream_id: `${ms}-${seq}`,
    type: 'LLM_PARTIAL',
    agent_id: 'bench-agent',
    message: BENCH_MESSAGE,
    timestamp: new Date(ms).toISOString(),
    payload: { pt: fmtPt(ptUs) },
  };
}

export const PAT_DATA = Buffer.from('\ndata: ');
export const PAT_PT = Buffer.from('"pt":"');
/** The end of an HTTP chunk that carries SSE frames: a frame's blank line, then the chunk's CRLF. */
export const PAT_WRITE_END = Buffer.from('\n\n\r\n');
/** Last bytes of a chunked response that ended (the server closed the stream). */
export const CHUNKED_END = Buffer.from('\n0\r\n\r\n');

/**
 * A frame exactly as the gateway encodes such an event (seq 1000), with `pt` zeroed, and the
 * byte offset of the pt digits. Used by the reference servers.
 */
export async function templateFrame(): Promise<{ frame: Buffer; ptOffset: number }> {
  const { encodeEvent } = await import('../../src/gateway/streams.js');
  const enc = encodeEvent(benchEvent(randomUUID(), 1000, 0));
  const i = enc.frame.indexOf(PAT_PT);
  if (i < 0) throw new Error('pt not found in the encoded frame');
  return { frame: enc.frame, ptOffset: i + PAT_PT.length };
}

/** Writes `us` as 16 ASCII digits at `off`. */
export function patchPt(buf: Buffer, off: number, us: number): void {
  let v = Math.floor(us);
  for (let k = PT_DIGITS - 1; k >= 0; k--) {
    buf[off + k] = 48 + (v % 10);
    v = Math.floor(v / 10);
  }
}

/** Reads 16 ASCII digits at `off`. */
export function readPt(buf: Buffer, off: number): number {
  let v = 0;
  for (let k = 0; k < PT_DIGITS; k++) v = v * 10 + (buf[off + k] - 48);
  return v;
}
