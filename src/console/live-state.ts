/**
 * The live state of one task's stream: the answer streamed so far (the text of its
 * `thread.message.delta` events), the other events, and the last event id. Kept in
 * sessionStorage after every event, so a reload goes on with `followStream` from that id: the
 * service sends only later events (no gap), and an event whose seq was already seen is dropped
 * (no repeat).
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, followStream, type StreamEvent } from '../client/index.js';
import { auth, messageOf, refresh } from './session.js';
import { PHASES } from './format.js';

/** One event as the console keeps it. */
export interface LiveEvent {
  seq: number;
  id?: string;
  type: string;
  agent_id: string;
  message: string;
  timestamp: string;
  payload?: Record<string, unknown>;
}

export interface LiveState {
  answer: string;
  events: LiveEvent[];
  lastId?: string;
  lastSeq: number;
  /** STREAM_END seen. */
  ended: boolean;
  /** From the workflow events: running, paused, completed, failed, cancelled. */
  phase: string;
}

const EMPTY: LiveState = { answer: '', events: [], lastSeq: 0, ended: false, phase: 'connecting' };
/** Events kept per task (the answer is kept whole). */
const MAX_EVENTS = 500;
/** A payload longer than this (as JSON) is kept cut short. */
const MAX_PAYLOAD = 8000;

const storeKey = (id: string) => `taskorch.live.${id}`;

export function loadLive(id: string): LiveState {
  try {
    const raw = sessionStorage.getItem(storeKey(id));
    return raw ? { ...EMPTY, ...(JSON.parse(raw) as LiveState) } : EMPTY;
  } catch {
    return EMPTY;
  }
}

function save(id: string, s: LiveState): void {
  try {
    sessionStorage.setItem(storeKey(id), JSON.stringify(s));
  } catch {
    // Storage full: the view goes on; a reload would start from the last saved event.
  }
}

function trimPayload(p: unknown): Record<string, unknown> | undefined {
  if (!p || typeof p !== 'object') return undefined;
  const text = JSON.stringify(p);
  return text.length <= MAX_PAYLOAD ? (p as Record<string, unknown>) : { truncated: `${text.slice(0, MAX_PAYLOAD)}…` };
}

/** The state after one event (the same state when it was seen before). */
export function applyEvent(s: LiveState, e: StreamEvent): LiveState {
  const d = (e.data ?? {}) as Partial<LiveEvent> & { delta?: string };
  if (typeof d !== 'object' || typeof d.seq !== 'number') return s;
  if (d.seq <= s.lastSeq) return s;
  const type = d.type ?? e.event;
  const next: LiveState = { ...s, lastSeq: d.seq, lastId: e.id ?? s.lastId };
  if (type === 'STREAM_END') next.ended = true;
  if (PHASES[type]) next.phase = PHASES[type];
  else if (next.phase === 'connecting') next.phase = 'running';
  if (type === 'LLM_PARTIAL') {
    next.answer = s.answer + (d.delta ?? d.message ?? '');
    return next;
  }
  const ev: LiveEvent = {
    seq: d.seq,
    id: e.id,
    type,
    agent_id: d.agent_id ?? '',
    message: d.message ?? '',
    timestamp: d.timestamp ?? '',
    payload: trimPayload(d.payload),
  };
  next.events = [...s.events, ev].slice(-MAX_EVENTS);
  return next;
}

/** Follows task `id`'s stream from where this tab left it; the state re-renders the caller. */
export function useLiveTask(id: string): { state: LiveState; error?: string } {
  const [state, setState] = useState<LiveState>(() => loadLive(id));
  const [error, setError] = useState<string>();
  useEffect(() => {
    let s = loadLive(id);
    setState(s);
    setError(undefined);
    if (s.ended) return;
    const ac = new AbortController();
    void (async () => {
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          for await (const e of followStream({ ...auth(), workflowId: id, lastEventId: s.lastId, signal: ac.signal })) {
            const n = applyEvent(s, e);
            if (n === s) continue;
            s = n;
            save(id, s);
            setState(s);
          }
          return;
        } catch (err) {
          if (ac.signal.aborted) return;
          if (err instanceof ApiError && err.status === 401 && attempt === 0 && (await refresh())) continue;
          setError(messageOf(err));
          return;
        }
      }
    })();
    return () => ac.abort();
  }, [id]);
  return { state, error };
}
