/** The swarm lead's reading of its model's answers: the plan, a person's message, and their fallbacks. */
import { describe, expect, it } from 'vitest';
import { MAX_PLANNED_TASKS, parsePlan, partsOf, tasksForMessage } from '../src/workflows/swarm-plan.js';

describe('swarm plan', () => {
  it('takes the JSON task list (array or {tasks}), strings or objects, up to MAX_PLANNED_TASKS', () => {
    const p = parsePlan('Here: [{"id": "a", "description": "Find X"}, "Find Y", {"description": "  "}, {"nope": 1}]', 'q', 10);
    expect(p.fromModel).toBe(true);
    expect(p.tasks).toEqual([
      { id: 't1', description: 'Find X', status: 'pending', source: 'plan' },
      { id: 't2', description: 'Find Y', status: 'pending', source: 'plan' },
    ]);
    expect(parsePlan('{"tasks": [{"description": "Only"}]}', 'q', 3).tasks.map((t) => t.description)).toEqual(['Only']);
    const many = JSON.stringify(Array.from({ length: 20 }, (_, i) => `task ${i}`));
    expect(parsePlan(many, 'q', 2).tasks).toHaveLength(MAX_PLANNED_TASKS);
  });

  it("without a JSON list, plans the request's lines, sentences or clauses, at most max_agents", () => {
    const off = '[offline provider: deterministic response, no language model was called] Request 1: "x".';
    expect(parsePlan(off, 'One. Two! Three?', 10)).toEqual({
      fromModel: false,
      tasks: ['One.', 'Two!', 'Three?'].map((d, i) => ({ id: `t${i + 1}`, description: d, status: 'pending', source: 'plan' })),
    });
    expect(partsOf('- first line\n- second line', 5)).toEqual(['first line', 'second line']);
    expect(partsOf('alpha; beta; gamma', 2)).toEqual(['alpha', 'beta']);
    expect(partsOf('just one request', 5)).toEqual(['just one request']);
  });

  it("a person's message: the model's list (possibly empty), else the message itself, numbered after the existing tasks", () => {
    expect(tasksForMessage('[{"description": "Check the Elbe"}]', 'msg', 3)).toEqual({
      fromModel: true,
      tasks: [{ id: 't4', description: 'Check the Elbe', status: 'pending', source: 'person' }],
    });
    expect(tasksForMessage('[]', 'msg', 3)).toEqual({ fromModel: true, tasks: [] });
    expect(tasksForMessage('I will look into it.', 'Also the Elbe', 2)).toEqual({
      fromModel: false,
      tasks: [{ id: 't3', description: 'Also the Elbe', status: 'pending', source: 'person' }],
    });
  });
});
