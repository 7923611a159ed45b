/**
 * An agent's input checked against its input_schema (the spec's rules), with the defaults
 * filled in: the object the agent's tool runs with.
 *
 * Every problem is reported, joined by "; ", in one 400 `input validation failed: ...`:
 * - `missing required field: <field>`: a required field absent or null (in schema order);
 * - `unknown field: <field> (not defined in agent schema)`;
 * - `field <field>: expected type <type>, got <type>` (string, integer, number, boolean,
 *   array, object; an integer is also a number);
 * - `field <field>: value <v> is not one of the allowed values: ...` (enum);
 * - `field <field>: <n> is below the minimum <m>` / `is above the maximum <m>`;
 * - `field <field>: <n> items, at most <m> allowed` (maxItems), and the element rules as
 *   `field <field>[<i>]: ...`.
 * An optional field given as null counts as absent (its default applies).
 *
 * `checkAgentInput` is the one check every submission path runs (the agents route, and
 * context.agent through POST /api/v1/tasks and gRPC SubmitTask): these rules, then the
 * defaulted input against the tool's own JSON schema (stricter: lengths, patterns, item
 * counts...), whose first broken rule is `field <field>: <reason>` (`field urls[0]: ...`).
 * An input the agent's tool would refuse is a 400 at submission, never a failed task.
 */
import { badRequest } from '../kernel/index.js';
import { jsonTypeOf, valueProblems, type AgentDefinition } from './catalogue-parse.js';

export const INPUT_VALIDATION_FAILED = 'input validation failed';

const invalid = (problems: string[]) => badRequest(`${INPUT_VALIDATION_FAILED}: ${problems.join('; ')}`);

/** The input with its defaults, or a 400 listing every problem. */
export function validateAgentInput(agent: Pick<AgentDefinition, 'inputSchema'>, input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid([`input must be an object, got ${jsonTypeOf(input)}`]);
  const given = input as Record<string, unknown>;
  const { required, properties } = agent.inputSchema;
  const problems: string[] = [];
  for (const f of required) if (!Object.hasOwn(given, f) || given[f] === null || given[f] === undefined) problems.push(`missing required field: ${f}`);
  const out: Record<string, unknown> = {};
  for (const [f, v] of Object.entries(given)) {
    if (!Object.hasOwn(properties, f)) {
      problems.push(`unknown field: ${f} (not defined in agent schema)`);
      continue;
    }
    if (v === null || v === undefined) continue;
    problems.push(...valueProblems(f, v, properties[f]));
    out[f] = v;
  }
  if (problems.length) throw invalid(problems);
  for (const [f, p] of Object.entries(properties)) if (!Object.hasOwn(out, f) && p.default !== undefined) out[f] = structuredClone(p.default);
  return out;
}

/** The first way the arguments break a tool's own schema (ToolRegistry.argumentProblem), or undefined. */
export type ToolArgumentCheck = (tool: string, args: Record<string, unknown>) => { field: string; reason: string } | undefined;

/** The input with its defaults, checked by the agent's schema and then its tool's; a 400 otherwise. */
export function checkAgentInput(
  agent: Pick<AgentDefinition, 'inputSchema' | 'tool'>,
  input: unknown,
  toolArguments: ToolArgumentCheck,
): Record<string, unknown> {
  const valid = validateAgentInput(agent, input);
  const p = toolArguments(agent.tool, valid);
  if (p) throw invalid([p.field ? `field ${p.field}: ${p.reason}` : `input ${p.reason}`]);
  return valid;
}
