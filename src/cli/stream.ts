/**
 * Follows a task's SSE stream to its end, printing the answer on stdout as it arrives and
 * progress on stderr (or, with `json`, every event as one JSON line). A lost connection, or
 * the gateway dropping a slow reader, is resumed from the last event id (Last-Event-ID) after
 * a backoff; more than 10 failures in a row give up.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelay } from '../kernel/index.js';
import { CliError } from './errors.js';
import { headersOf, jsonOf, type Conn } from './http.js';
import { err, out, paint } from './output.js';

// One client: no jitter needed. 0.5, 1, 2, then 3 s: about 25 s of a lost gateway before giving up.
const RECONNECT = { baseMs: 500, capMs: 3000, jitter: 'none' } as const;
const MAX_FAILURES = 10;

/** The events of an SSE body (comments, i.e. heartbeats, are skipped by the parser). */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => queue.push(e) });
  const dec = new TextDecoder();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(dec.decode(chunk, { stream: true }));
    while (queue.length) yield queue.shift()!;
  }
}

/** Prints the stream of `taskId` until it ends; resolves to the status STREAM_END named, if seen. */
export async function followStream(conn: Conn, taskId: string, streamPath: string, json: boolean): Promise<string | undefined> {
  let midLine = false; // stdout holds text without its final newline
  let textAgent: string | undefined; // the agent whose deltas are being printed
  const agents = new Set<string>(); // agents that started: with more than one, text is labelled
  let streamedText = false; // deltas seen since the last completed message
  const status = (line: string) => {
    if (json) return;
    if (midLine) out('\n');
    midLine = false;
    err(`${line}\n`);
  };
  const text = (s: string) => {
    if (!s) return;
    out(s);
    midLine = !s.endsWith('\n');
  };

  let lastId: string | undefined;
  let ended = false;
  let endStatus: string | undefined;
  let failures = 0;
  while (!ended) {
    const ac = new AbortController();
    let streamRes: Response | undefined;
    try {
      streamRes = await fetch(`${conn.url}${streamPath}`, {
        headers: headersOf(conn, { Accept: 'text/event-stream', ...(lastId ? { 'Last-Event-ID': lastId } : {}) }),
        signal: ac.signal,
      });
    } catch {
      streamRes = undefined;
    }
    if (streamRes && !streamRes.ok) await jsonOf(streamRes, `stream of task ${taskId}`);
    try {
      if (streamRes?.body) {
        for await (const f of sseEvents(streamRes.body)) {
          failures = 0;
          if (f.id) lastId = f.id;
          if (f.event === 'done') {
            ended = true;
            break;
          }
          if (f.event === 'error') break; // the gateway dropped a slow reader: resume from lastId
          let e: any;
          try {
            e = JSON.parse(f.data);
          } catch {
            continue;
          }
          if (json) out(`${JSON.stringify(e)}\n`);
          switch (e.type) {
            case 'LLM_PARTIAL': {
              if (json) break;
              if (textAgent !== e.agent_id && (midLine || agents.size > 1)) status(paint('36', `▸ ${e.agent_id}`));
              textAgent = e.agent_id;
              text(String(e.payload?.delta ?? e.delta ?? ''));
              streamedText = true;
              break;
            }
            case 'LLM_OUTPUT':
              if (json) break;
              if (!streamedText) text(String(e.message ?? ''));
              if (midLine) text('\n');
              streamedText = false;
              textAgent = undefined;
              break;
            case 'LLM_PROMPT':
              break;
            case 'AGENT_STARTED':
              agents.add(String(e.agent_id));
              status(paint('2', `· ${e.message || e.type}`));
              break;
            case 'STREAM_END':
              endStatus = e.payload?.status;
              break;
            case 'ERROR_OCCURRED':
              status(paint('31', `✗ ${e.message || 'error'}`));
              break;
            case 'REPLAY_GAP':
              status(paint('33', '· some earlier events are no longer retained by the gateway'));
              break;
            default:
              status(paint('2', `· ${e.message || e.type}`));
          }
        }
      }
    } catch {
      // Connection lost mid-stream: resume below from the last event id.
    } finally {
      ac.abort();
    }
    if (!ended && endStatus) ended = true; // STREAM_END seen, the `done` frame lost with the connection
    if (ended) break;
    if (++failures > MAX_FAILURES) throw new CliError(`lost the stream of task ${taskId}; it may still be running: taskorch status ${taskId}`);
    await sleep(backoffDelay(RECONNECT, failures));
  }
  if (midLine) out('\n');
  return endStatus;
}
