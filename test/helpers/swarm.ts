/**
 * Swarm test helpers: a scripted model that answers the swarm's lead (its plan, its decision on a
 * person's message), each agent by name and turn, and everything else; submitting a swarm and
 * reading its status and events through the typed client (src/client: its stored events, its
 * stream followed to the end); a features file with given swarm limits.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFetch, followStream, ok } from '../../src/client/index.js';
import { apiClient, fetchWith, json, okOrRetry, waitFor, type SubmitBody } from './app.js';
import type { RecordedRequest, Reply, ReplyFn } from './openai-server.js';

export type Ev = { seq: number; type: string; agent_id: string; message: string; payload?: any };

export const systemOf = (r: RecordedRequest) => String((r.messages ?? []).find((m) => m.role === 'system')?.content ?? '');
export const usersOf = (r: RecordedRequest) => (r.messages ?? []).filter((m) => m.role === 'user').map((m) => String(m.content));
/** The agent a request comes from (its first user message names it), if any. */
export const agentOf = (r: RecordedRequest) => /^You are (agent-\d+), one agent of a swarm/.exec(usersOf(r)[0] ?? '')?.[1];
/** Which turn of its agent a request is (1 + the assistant messages before it). */
export const turnOf = (r: RecordedRequest) => 1 + (r.messages ?? []).filter((m) => m.role === 'assistant').length;
export const offersTools = (r: RecordedRequest) => Array.isArray(r.body?.tools) && r.body.tools.length > 0;

export const text = (content: string, extra: Partial<Extract<Reply, { type: 'completion' }>> = {}): Reply => ({ type: 'completion', content, ...extra });
export const toolCall = (id: string, name: string, args: Record<string, unknown>, extra: Partial<Extract<Reply, { type: 'completion' }>> = {}): Reply => ({
  type: 'completion',
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
  ...extra,
});

export interface SwarmScript {
  /** The lead's plan: task descriptions. */
  plan: string[];
  /** An agent's reply at a turn. Default: answers `<agent> done`. */
  agent?: (agent: string, turn: number, r: RecordedRequest) => Reply;
  /** The lead's decision on a person's message. Default: no JSON (the message becomes a task). */
  person?: (r: RecordedRequest) => Reply;
  /** The synthesis and anything else (a re-routed workflow). Default: `swarm answer`. */
  other?: (r: RecordedRequest) => Reply;
}

export function swarmModel(s: SwarmScript): ReplyFn {
  return (r) => {
    const sys = systemOf(r);
    if (sys.startsWith('You lead a swarm of up to')) return text(JSON.stringify(s.plan.map((d, i) => ({ id: `p${i + 1}`, description: d }))));
    if (sys.startsWith('You lead a swarm of agents. A person')) return s.person?.(r) ?? text('I will look into it.');
    const a = agentOf(r);
    if (a) return s.agent?.(a, turnOf(r), r) ?? text(`${a} done`);
    return s.other?.(r) ?? text('swarm answer');
  };
}

/** A features file holding these swarm limits (and `more`, YAML of other sections). */
export function swarmConfig(limits: Record<string, unknown>, more = ''): string {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-features-'));
  const p = join(dir, 'features.yaml');
  const lines = Object.entries(limits).map(([k, v]) => `  ${k}: ${String(v)}`);
  writeFileSync(p, `swarm:\n${lines.join('\n')}\n${more}`);
  return p;
}

/** The tool names a request offered the model. */
export const toolsOf = (r: RecordedRequest): string[] => (Array.isArray(r.body?.tools) ? r.body.tools.map((x: any) => String(x.function?.name)) : []);

export async function submitSwarm(base: string, query: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}): Promise<string> {
  const body = { query, context: { force_swarm: true }, ...extra } as SubmitBody;
  return ok(await apiClient(base, headers).POST('/api/v1/tasks', { body })).task_id;
}

/** The swarm's status body once it ended (completed, failed, cancelled or timed out). */
export async function finished(base: string, id: string, headers: Record<string, string> = {}, timeoutMs = 30_000): Promise<any> {
  const api = apiClient(base, headers);
  return waitFor(async () => {
    const x = okOrRetry(await api.GET('/api/v1/tasks/{id}', { params: { path: { id } } }));
    return x && /COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(x.status) ? x : undefined;
  }, timeoutMs);
}

/** Every event of the workflow's stream, followed to its end (STREAM_END). */
export async function eventsOf(base: string, id: string, headers: Record<string, string> = {}): Promise<Ev[]> {
  const evs: Ev[] = [];
  for await (const e of followStream({ baseUrl: base, workflowId: id, fetch: fetchWith(headers), signal: AbortSignal.timeout(20_000) })) evs.push(e.data as Ev);
  return evs;
}

/** Waits until the workflow's stream shows an event `pred` accepts (reads the stored events). */
export async function untilEvent(base: string, id: string, pred: (e: Ev) => boolean, headers: Record<string, string> = {}, timeoutMs = 20_000): Promise<Ev> {
  const api = apiClient(base, headers);
  return waitFor(
    async () => {
      const b = okOrRetry(await api.GET('/api/v1/tasks/{id}/events', { params: { path: { id }, query: { limit: 5000 } } }));
      return (b?.events as Ev[] | undefined)?.find(pred);
    },
    timeoutMs,
    50,
  );
}

/** Sends a person's message to the swarm's lead: the raw status and JSON body (a string body is sent as it is). */
export async function postMessage(base: string, id: string, body: unknown, headers: Record<string, string> = {}) {
  const r = await createFetch({ baseUrl: base })(`/api/v1/swarm/${id}/message`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: r.status, body: await json(r) };
}
