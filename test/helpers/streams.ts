/**
 * What the streaming tests share: SSE and WebSocket clients, a raw HTTP client that stops
 * reading, the checks of a well-formed stream, submitting a task and waiting for its end through
 * the typed client (src/client), and an offline provider with gates the test opens and outputs
 * as large as it asks.
 */
import net from 'node:net';
import { expect } from 'vitest';
import WebSocket from 'ws';
import { createFetch, ok } from '../../src/client/index.js';
import { OfflineProvider, type LlmProvider, type LlmRequest, type LlmResult } from '../../src/llm/index.js';
import { apiClient, okOrRetry, parseSse, readSse, waitFor, type SseEvent, type SseResult as BaseSseResult, type SubmitBody, type TestApp } from './app.js';

export type Frame = SseEvent;
export type SseResult = BaseSseResult & { frames: Frame[] };

/** readSse, with the frames under the name this file uses. */
export async function sse(url: string, opts: Parameters<typeof readSse>[1] = {}): Promise<SseResult> {
  const r = await readSse(url, opts);
  return { ...r, frames: r.events };
}

export interface Ev {
  workflow_id: string;
  seq: number;
  stream_id: string;
  type: string;
  agent_id: string;
  message: string;
  timestamp: string;
  payload?: Record<string, unknown>;
  [k: string]: unknown;
}

/** The event frames of a stream (not REPLAY_GAP, not done), parsed. */
export const eventsOf = (frames: Frame[]): Ev[] =>
  frames.filter((f) => f.event !== 'done' && f.event !== 'REPLAY_GAP' && f.event !== 'error').map((f) => JSON.parse(f.data) as Ev);
export const seqs = (evs: { seq: number }[]) => evs.map((e) => e.seq);
export const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
export const DONE: Frame = { event: 'done', data: '[DONE]' };

/** Every frame of a complete stream: ids match seqs, event names match types, ends with done. */
export function expectWellFormed(frames: Frame[]) {
  expect(frames.at(-1)).toEqual(DONE);
  expect(frames.filter((f) => f.event === 'done')).toHaveLength(1);
  for (const f of frames) {
    if (f.event === 'done' || f.event === 'REPLAY_GAP') continue;
    const e = JSON.parse(f.data) as Ev;
    expect(f.id).toBe(e.stream_id);
    expect(f.id).toBe(`${Date.parse(e.timestamp)}-${e.seq}`);
    expect(f.event).toBe(e.type === 'LLM_PARTIAL' ? 'thread.message.delta' : e.type === 'LLM_OUTPUT' ? 'thread.message.completed' : e.type);
  }
}

export interface WsResult {
  status?: number;
  body?: string;
  messages: Ev[];
  code?: number;
  reason?: string;
}

/** Opens a WebSocket and collects its JSON messages until the server closes it. */
export function wsCollect(url: string, opts: { onOpen?: () => void; timeoutMs?: number } = {}): Promise<WsResult> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const messages: Ev[] = [];
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`websocket did not close within the test timeout; got ${messages.length} messages`));
    }, opts.timeoutMs ?? 20_000);
    ws.on('open', () => opts.onOpen?.());
    ws.on('message', (data, isBinary) => {
      expect(isBinary).toBe(false);
      messages.push(JSON.parse(data.toString()) as Ev);
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode, body, messages });
      });
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ status: 101, messages, code, reason: reason.toString() });
    });
    ws.on('error', (err) => {
      if (!/Unexpected server response/.test(err.message)) {
        clearTimeout(timer);
        reject(err);
      }
    });
  });
}

/** POST /api/v1/tasks with any body: the raw Response. */
export const post = (t: TestApp, body: unknown) =>
  createFetch({ baseUrl: t.base })('/api/v1/tasks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Submits a task (it must be accepted: 200); returns its id. */
export async function submit(t: TestApp, body: Record<string, unknown>): Promise<string> {
  const r = await apiClient(t.base).POST('/api/v1/tasks', { body: body as SubmitBody });
  expect(r.response.status, JSON.stringify(r.error)).toBe(200);
  return ok(r).task_id;
}

/** The task's status body once it completed or failed. */
export async function waitTerminal(t: TestApp, id: string): Promise<any> {
  const api = apiClient(t.base);
  return waitFor(async () => {
    const s = okOrRetry(await api.GET('/api/v1/tasks/{id}', { params: { path: { id } } }));
    return s && ['TASK_STATUS_COMPLETED', 'TASK_STATUS_FAILED'].includes(s.status) ? s : undefined;
  }, 30_000);
}

export const sseUrl = (t: TestApp, id: string, q = '') => `${t.base}/api/v1/stream/sse?workflow_id=${id}${q}`;
export const gw = (t: TestApp) => t.app.gateway!;
/** Private state of the gateway, read to check fan-out and slow-client handling. */
export const sseSet = (t: TestApp) => (gw(t) as unknown as { sse: Set<unknown> }).sse;
/** Core NATS subscriptions of the app's connection on one workflow's event subject. */
export function eventSubs(t: TestApp, id: string): number {
  const subs = (t.app.bus.nc as unknown as { protocol: { subscriptions: { all(): { subject: string }[] } } }).protocol.subscriptions.all();
  return subs.filter((s) => s.subject === `svc.events.${id}`).length;
}

/**
 * Offline provider with test hooks read from the user message: `[gate:<key>]` waits until the
 * test opens that gate; `[synth-gate:<key>]` does so for the synthesizer only; `[big:<n>]`
 * answers with n characters (and, as planner, with 8 subtasks) so one workflow produces many
 * megabytes of events; `[pace]` yields to the event loop between its 64 kB deltas.
 */
export class TestLlm implements LlmProvider {
  readonly name = 'offline';
  private readonly inner = new OfflineProvider({ chunkDelayMs: 0 });
  private readonly gates = new Map<string, { promise: Promise<void>; open: () => void }>();

  gate(key: string) {
    let g = this.gates.get(key);
    if (!g) {
      let open!: () => void;
      const promise = new Promise<void>((r) => (open = r));
      g = { promise, open };
      this.gates.set(key, g);
    }
    return g;
  }

  async complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult> {
    const user = [...req.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const system = req.messages.find((m) => m.role === 'system')?.content ?? '';
    const gate = /\[gate:([\w-]+)\]/.exec(user);
    if (gate) await this.gate(gate[1]).promise;
    const synthGate = /\[synth-gate:([\w-]+)\]/.exec(user);
    if (synthGate && user.startsWith('Combine these subtask results')) await this.gate(synthGate[1]).promise;
    const big = /\[big:(\d+)\]/.exec(user);
    if (!big) return this.inner.complete(req, onDelta);
    const text = /json array of subtasks/i.test(system)
      ? JSON.stringify(range(1, 8).map((i) => ({ id: `part-${i}`, description: `part ${i}` })))
      : 'x'.repeat(Number(big[1]));
    for (let i = 0; i < text.length; i += 65_536) {
      if (user.includes('[pace]')) await new Promise((r) => setTimeout(r, 1));
      onDelta?.(text.slice(i, i + 65_536));
    }
    return {
      text,
      model: 'offline-deterministic',
      provider: 'offline',
      finishReason: 'stop',
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, costUsd: 0 },
    };
  }
}

/** A raw HTTP client that sends its request and then does not read until drain() is called. */
export function stalledClient(t: TestApp, path: string) {
  const sock = net.connect(t.app.gatewayPort!, '127.0.0.1');
  sock.pause();
  sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  sock.on('error', () => {});
  const chunks: Buffer[] = [];
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  let reading = false;
  return {
    sock,
    /** Starts reading; what arrived so far is in received(). */
    resume() {
      if (!reading) sock.on('data', (c: Buffer) => chunks.push(c));
      reading = true;
      sock.resume();
    },
    received: () => Buffer.concat(chunks),
    /** Resumes reading and resolves with everything received once the server closed. */
    async drain(): Promise<string> {
      this.resume();
      await closed;
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/** Decodes an HTTP/1.1 chunked response (possibly incomplete). */
export function dechunk(raw: string): { head: string; body: string } {
  const i = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, i);
  let rest = raw.slice(i + 4);
  let body = '';
  for (;;) {
    const j = rest.indexOf('\r\n');
    if (j < 0) break;
    const n = parseInt(rest.slice(0, j), 16);
    if (!n || rest.length < j + 2 + n) break;
    body += rest.slice(j + 2, j + 2 + n);
    rest = rest.slice(j + 2 + n + 2);
  }
  return { head, body };
}

/** The seqs of the SSE event frames (those with an id) in a decoded body, and its other frames. */
export function sseBody(body: string): { seqs: number[]; others: Frame[]; frames: Frame[] } {
  const frames = parseSse(body);
  const seqs = frames.filter((f) => f.id !== undefined).map((f) => JSON.parse(f.data).seq as number);
  return { seqs, others: frames.filter((f) => f.id === undefined), frames };
}
