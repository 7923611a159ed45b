/**
 * Follows a task's SSE stream to its end, printing the answer on stdout as it arrives and
 * progress on stderr (or, with `json`, every event as one JSON line). The API client's follower
 * (src/client) reads the stream and resumes it: a lost connection, a 5xx answer or the gateway
 * dropping a slow reader is resumed from the last event id (Last-Event-ID) after a backoff
 * (0.5, 1, 2, then 3 s); 10 failed attempts in a row give up.
 */
import { ApiError, NetworkError, followStream as follow } from '../client/index.js';
import { CliError } from './errors.js';
import { apiMessage, clientOptionsOf, type Conn } from './http.js';
import { err, out, paint } from './output.js';

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

  let endStatus: string | undefined;
  try {
    for await (const f of follow({ ...clientOptionsOf(conn, undefined), workflowId: taskId, path: streamPath })) {
      if (typeof f.data !== 'object' || f.data === null) continue; // not an event (not JSON)
      const e = f.data as any;
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
  } catch (e) {
    if (e instanceof ApiError) throw new CliError(apiMessage(e, `stream of task ${taskId}`));
    if (e instanceof NetworkError) throw new CliError(`lost the stream of task ${taskId}; it may still be running: taskorch status ${taskId}`);
    throw e;
  }
  if (midLine) out('\n');
  return endStatus;
}
