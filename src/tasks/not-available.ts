/**
 * Submission fields of the interface that nothing implements yet (the agents issue does).
 * Accepting one and running the task without it would pretend, so each is refused:
 * `<field> is not available yet` (HTTP 400, gRPC InvalidArgument). One list for every entry
 * point: the HTTP gateway checks it before anything is claimed or queued, and
 * OrchestratorService.SubmitTask checks it again for gRPC callers and the scheduler.
 *
 * A field counts as given when it holds anything but its "unset" value: absent, null, an
 * empty string, false (a flag that turns nothing on) or 0 (proto3's unset integer). A flag is
 * read as clients send it ("false" and "0" turn nothing on either; context-values.ts).
 */
import { CONTEXT_VALUE_RULES, parseBoolean } from './context-values.js';

/** Top-level fields of the submission (REST body, gRPC SubmitOptions). */
export const NOT_AVAILABLE_FIELDS: readonly string[] = [];

/** Keys of `context` nothing implements yet (none today: the swarm and named agents run). */
export const NOT_AVAILABLE_CONTEXT_KEYS: readonly string[] = [];

const given = (v: unknown) => v !== undefined && v !== null && v !== '' && v !== false && v !== 0;

export const notAvailableMessage = (field: string) => `${field} is not available yet`;

/** The first not-yet-available field the submission gives ("context.<key>" for context keys), if any. */
export function notAvailableField(top: Readonly<Record<string, unknown>>, context: Readonly<Record<string, unknown>> | undefined): string | undefined {
  for (const f of NOT_AVAILABLE_FIELDS) if (Object.hasOwn(top, f) && given(top[f])) return f;
  if (context) {
    for (const k of NOT_AVAILABLE_CONTEXT_KEYS) {
      if (!Object.hasOwn(context, k)) continue;
      const v = CONTEXT_VALUE_RULES[k]?.type === 'boolean' ? (parseBoolean(context[k]) ?? context[k]) : context[k];
      if (given(v)) return `context.${k}`;
    }
  }
  return undefined;
}

/** The name of the first of `fields` that is given, if any (for lists kept at their entry point). */
export function firstGiven(fields: Readonly<Record<string, unknown>>): string | undefined {
  return Object.entries(fields).find(([, v]) => given(v))?.[0];
}
