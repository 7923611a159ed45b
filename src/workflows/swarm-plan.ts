/**
 * What the swarm's lead asks its model, and how it reads the answers: the initial task list,
 * the tasks a person's message adds, and the synthesis prompt. A model that answers without
 * the JSON asked for (the offline provider) gets a deterministic fallback: the plan is the
 * request's own parts (its lines, sentences or `;`-separated clauses), and a person's message
 * becomes one new task as written.
 */
import type { SwarmTask } from '../swarm/index.js';

/** Most tasks one plan or one person's message may add. */
export const MAX_PLANNED_TASKS = 10;

/** Longest task description kept. */
const MAX_TASK_CHARS = 2000;

export const swarmPlanPrompt = (tools: string[], maxAgents: number) =>
  `You lead a swarm of up to ${maxAgents} agents that work in parallel and can message each other. Split the user request into 1 to ` +
  `${Math.min(maxAgents, MAX_PLANNED_TASKS)} independent tasks, one per agent. Respond with a JSON array only: ` +
  '[{"id": "short-id", "description": "what the agent must do"}]. ' +
  `Tools the agents have: ${tools.join(', ') || 'none'}.`;

/** The lead's instructions for a person's message (system), and the message with the task list (user). */
export const personMessageSystem =
  'You lead a swarm of agents. A person sent you a message while the swarm works. Decide which new tasks it calls for. ' +
  'Respond with a JSON array only of the tasks to add ([{"id": "short-id", "description": "what an agent must do"}]; [] when none).';

export const personMessageInput = (query: string, tasks: SwarmTask[], message: string) =>
  `Message: ${message}\n\nThe swarm works on: ${query}\n\nIts tasks now:\n${tasks.map((t) => `- ${t.id} (${t.status}): ${t.description}`).join('\n')}`;

export const synthesisPrompt = (query: string, results: { agent: string; task: string; text: string }[], notes: string[]) =>
  `Combine the results of the swarm's agents into one answer to: ${query}\n\n` +
  results.map((r, i) => `[${i + 1}] ${r.agent} (${r.task}): ${r.text}`).join('\n\n') +
  (notes.length ? `\n\nMessages the agents sent the lead:\n${notes.join('\n')}` : '');

/** A JSON array in `text` (or `{tasks: [...]}`), else undefined. */
function jsonTasks(text: string): unknown[] | undefined {
  const candidates = [/\[[\s\S]*\]/.exec(text)?.[0], /\{[\s\S]*\}/.exec(text)?.[0]];
  for (const c of candidates) {
    if (!c) continue;
    try {
      const v = JSON.parse(c) as unknown;
      if (Array.isArray(v)) return v;
      if (v && typeof v === 'object' && Array.isArray((v as { tasks?: unknown }).tasks)) return (v as { tasks: unknown[] }).tasks;
    } catch {
      /* not JSON */
    }
  }
  return undefined;
}

/** Task descriptions from a model's JSON answer (strings or {description}); undefined when it gave none. */
function descriptionsOf(text: string): string[] | undefined {
  const list = jsonTasks(text);
  if (!list) return undefined;
  return list
    .map((x) => (typeof x === 'string' ? x : x && typeof x === 'object' ? (x as { description?: unknown }).description : undefined))
    .filter((d): d is string => typeof d === 'string' && !!d.trim())
    .map((d) => d.trim().slice(0, MAX_TASK_CHARS));
}

/** The request's own parts: its lines, else its sentences, else its `;` clauses (at most `max`). */
export function partsOf(query: string, max: number): string[] {
  const clean = (xs: string[]) => xs.map((x) => x.replace(/^[-*\d.)\s]+/, '').trim()).filter((x) => x.length > 2);
  const lines = clean(query.split(/\n+/));
  const sentences = clean(query.split(/(?<=[.!?])\s+/));
  const clauses = clean(query.split(/;/));
  const best = [lines, sentences, clauses].find((xs) => xs.length > 1) ?? [query.trim()];
  return best.slice(0, Math.max(1, max)).map((x) => x.slice(0, MAX_TASK_CHARS));
}

/** Ids `t1`, `t2`, ... after the `taken` count. */
const tasksFrom = (descriptions: string[], taken: number, source: SwarmTask['source']): SwarmTask[] =>
  descriptions.map((description, i) => ({ id: `t${taken + i + 1}`, description, status: 'pending' as const, source }));

/** The initial task list from the planner's answer (its JSON, at most MAX_PLANNED_TASKS), or the request's parts (at most `maxAgents`). */
export function parsePlan(text: string, query: string, maxAgents: number): { tasks: SwarmTask[]; fromModel: boolean } {
  // A model that planned more tasks than max_agents allows: the lead blocks the rest, visibly.
  const max = MAX_PLANNED_TASKS;
  const given = descriptionsOf(text)?.slice(0, max);
  if (given?.length) return { tasks: tasksFrom(given, 0, 'plan'), fromModel: true };
  return { tasks: tasksFrom(partsOf(query, Math.min(maxAgents, max)), 0, 'plan'), fromModel: false };
}

/** The tasks a person's message adds (the model's JSON answer; without one, the message itself). */
export function tasksForMessage(text: string, message: string, taken: number): { tasks: SwarmTask[]; fromModel: boolean } {
  const given = descriptionsOf(text);
  if (given) return { tasks: tasksFrom(given.slice(0, MAX_PLANNED_TASKS), taken, 'person'), fromModel: true };
  return { tasks: tasksFrom([message.slice(0, MAX_TASK_CHARS)], taken, 'person'), fromModel: false };
}
