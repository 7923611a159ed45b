/**
 * One streaming completion: the task's workflow events in (from its feed, shared with SSE and
 * WebSocket), OpenAI chunks out. Content chunks are exactly the LLM_PARTIAL deltas a workflow
 * marks as its final answer (`payload.final_answer: true`, in every mode), so no list of
 * answering agents lives here; other agents' text (plans, tool-loop turns) is not the answer
 * and is not streamed. The forwarded event types ride along as `service_events`.
 */
import type { HttpResponse } from 'uWebSockets.js';
import type { WorkflowEvent } from '../../bus/index.js';
import { writeStreaming, type Encoded, type Feed, type Subscriber } from '../streams.js';
import { OUTCOME_EVENTS, outcomeOf, type Outcome } from './outcome.js';
import { FORWARDED_EVENTS, chunkJson, frame, type CompletionHead, type ServiceEvent } from './responses.js';

const STREAM_TYPES: ReadonlySet<string> = new Set([...FORWARDED_EVENTS, ...OUTCOME_EVENTS, 'LLM_PARTIAL']);

/** A delta of the task's answer (not of a plan, a tool-loop turn or a subtask). */
const isFinalAnswer = (e: WorkflowEvent) => (e.payload as Record<string, unknown> | undefined)?.final_answer === true;

const serviceEvent = (e: WorkflowEvent): ServiceEvent => ({
  type: e.type,
  agent_id: e.agent_id,
  message: e.message,
  timestamp: Math.floor(Date.parse(e.timestamp) / 1000),
  payload: (e.payload ?? {}) as Record<string, unknown>,
});

/** One streaming completion: workflow events in, OpenAI chunks out. */
export class CompletionStream implements Subscriber {
  cursor = 0;
  readonly filter = STREAM_TYPES;
  backpressured = false;
  closed = false;
  stalledAt?: number;
  feed?: Feed;
  /** The answer text sent so far. */
  sent = '';
  /**
   * A tool call came after answer text: that text was the agent's narration before the call, and
   * the next turn's text starts a new paragraph instead of running on from it.
   */
  private toolSinceText = false;
  outcome?: Outcome;
  /** The response is over (ended, or the client went away). */
  finished = false;

  constructor(
    private readonly res: HttpResponse,
    private readonly kind: 'chat' | 'text',
    private readonly head: CompletionHead,
    private readonly onEnd: (s: CompletionStream) => void,
    private readonly onDrop: (s: CompletionStream, reason: string) => void,
  ) {}

  write(events: Encoded[]): boolean {
    if (this.finished) return false;
    let out = '';
    let text = '';
    let evs: ServiceEvent[] = [];
    const flushText = () => {
      if (!text) return;
      out += frame(chunkJson(this.kind, this.head, { delta: { content: text } }));
      this.sent += text;
      text = '';
    };
    const flushEvents = () => {
      if (!evs.length) return;
      out += frame(chunkJson(this.kind, this.head, { events: evs }));
      evs = [];
    };
    for (const enc of events) {
      const e = JSON.parse(enc.json) as WorkflowEvent;
      if (e.type === 'LLM_PARTIAL') {
        if (isFinalAnswer(e) && e.message) {
          flushEvents();
          if (this.toolSinceText) text += '\n\n';
          this.toolSinceText = false;
          text += e.message;
        }
        continue;
      }
      if (e.type === 'TOOL_INVOKED' && (this.sent || text)) this.toolSinceText = true;
      this.outcome = outcomeOf(e) ?? this.outcome;
      if (FORWARDED_EVENTS.has(e.type)) {
        flushText();
        evs.push(serviceEvent(e));
      }
    }
    flushText();
    flushEvents();
    return out ? this.writeRaw(out) : true;
  }

  /**
   * What the stream did not carry of the task's result: the rest when the result goes on from
   * what was streamed, the whole result when nothing was (a cache hit, a template's output).
   */
  remainder(result: string): string {
    if (result.startsWith(this.sent)) return result.slice(this.sent.length);
    return this.sent ? '' : result;
  }

  writeRaw(buf: string): boolean {
    return writeStreaming(this.res, this, buf, () => this.finished);
  }

  /** The last bytes of the response. */
  close(tail: string): void {
    if (this.finished) return;
    this.finished = true;
    this.res.cork(() => this.res.end(tail));
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.onEnd(this);
  }

  drop(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.feed?.remove(this);
    this.onDrop(this, reason);
  }
}
