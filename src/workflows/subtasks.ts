/**
 * A planner's answer as a plan: the prompt that asks for subtasks, and the parse that makes
 * any answer a valid DAG (unique ids, dependencies only on earlier subtasks, at most
 * MAX_SUBTASKS; the request itself when nothing usable came back).
 */
import { isTier, type Tier } from '../kernel/index.js';

/** Most subtasks a plan may have. */
export const MAX_SUBTASKS = 8;

export interface Subtask {
  id: string;
  description: string;
  dependencies: string[];
  requiredTools: string[];
  modelTier?: Tier;
}

export const plannerPrompt = (tools: string[]) =>
  `Decompose the user request into 1 to ${MAX_SUBTASKS} subtasks that agents can carry out. Respond with a JSON array of subtasks: ` +
  '[{"id": "short-id", "description": "what to do", "dependencies": ["ids of subtasks whose results it needs"], ' +
  `"required_tools": [tool names], "model_tier": "small|medium|large"}]. Available tools: ${tools.join(', ') || 'none'}.`;

/**
 * The plan of a planner's answer: a JSON array (or {subtasks: [...]}) of subtasks. Ids are
 * made unique; a dependency must name an earlier subtask (so the graph has no cycle);
 * unknown tools and tiers are dropped. Falls back to one subtask: the request itself.
 */
export function parseSubtasks(text: string, query: string): Subtask[] {
  let parsed: unknown;
  try {
    const m = /\[[\s\S]*\]/.exec(text);
    parsed = m ? JSON.parse(m[0]) : undefined;
  } catch {
    parsed = undefined;
  }
  const list: Subtask[] = [];
  const seen = new Set<string>();
  if (Array.isArray(parsed)) {
    for (const [i, x] of parsed.entries()) {
      const o = (typeof x === 'string' ? { description: x } : (x ?? {})) as Record<string, unknown>;
      const description = typeof o.description === 'string' ? o.description.trim() : '';
      if (!description) continue;
      let id = typeof o.id === 'string' && o.id.trim() ? o.id.trim() : `subtask-${i + 1}`;
      if (seen.has(id)) id = `${id}-${i + 1}`;
      const deps = Array.isArray(o.dependencies) ? o.dependencies.filter((d): d is string => typeof d === 'string' && seen.has(d)) : [];
      const tools = Array.isArray(o.required_tools) ? o.required_tools.filter((d): d is string => typeof d === 'string') : [];
      const tier = typeof o.model_tier === 'string' && isTier(o.model_tier) ? o.model_tier : undefined;
      seen.add(id);
      list.push({ id, description, dependencies: [...new Set(deps)], requiredTools: tools, ...(tier ? { modelTier: tier } : {}) });
      if (list.length >= MAX_SUBTASKS) break;
    }
  }
  return list.length ? list : [{ id: 'subtask-1', description: query, dependencies: [], requiredTools: [] }];
}
