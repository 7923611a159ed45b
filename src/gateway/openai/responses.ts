/**
 * What the OpenAI-compatible layer sends: completion bodies, stream chunks (with the
 * `service_events` extension carrying forwarded workflow events) and the SSE frame around them.
 */

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** A forwarded workflow event, as the `service_events` extension carries it. */
export interface ServiceEvent {
  type: string;
  agent_id: string;
  message: string;
  /** Unix seconds. */
  timestamp: number;
  payload: Record<string, unknown>;
}

/** The event types the OpenAI-compatible stream forwards (spec, "Events", 5). */
export const FORWARDED_EVENTS: ReadonlySet<string> = new Set([
  'WORKFLOW_STARTED',
  'WORKFLOW_PAUSING',
  'WORKFLOW_PAUSED',
  'WORKFLOW_RESUMED',
  'WORKFLOW_CANCELLING',
  'WORKFLOW_CANCELLED',
  'AGENT_STARTED',
  'AGENT_COMPLETED',
  'AGENT_THINKING',
  'TOOL_INVOKED',
  'TOOL_OBSERVATION',
  'PROGRESS',
  'DATA_PROCESSING',
  'WAITING',
  'ERROR_RECOVERY',
  'TEAM_RECRUITED',
  'TEAM_RETIRED',
  'TEAM_STATUS',
  'ROLE_ASSIGNED',
  'DELEGATION',
  'DEPENDENCY_SATISFIED',
  'BUDGET_THRESHOLD',
  'APPROVAL_REQUESTED',
  'APPROVAL_DECISION',
]);

/** What identifies one completion in every body and chunk. */
export interface CompletionHead {
  id: string;
  created: number;
  model: string;
}

export function chatCompletionJson(h: CompletionHead, content: string, usage: Usage) {
  return {
    id: h.id,
    object: 'chat.completion' as const,
    created: h.created,
    model: h.model,
    choices: [{ index: 0, message: { role: 'assistant' as const, content }, finish_reason: 'stop' as const }],
    usage,
  };
}

export function textCompletionJson(h: CompletionHead, text: string, usage: Usage) {
  return {
    id: h.id,
    object: 'text_completion' as const,
    created: h.created,
    model: h.model,
    choices: [{ text, index: 0, logprobs: null, finish_reason: 'stop' as const }],
    usage,
  };
}

/** One chunk: a delta (chat) or text (legacy), optionally the finish reason, usage and service events. */
export function chunkJson(
  kind: 'chat' | 'text',
  h: CompletionHead,
  part: { delta?: { role?: 'assistant'; content?: string }; finish?: 'stop'; usage?: Usage; events?: ServiceEvent[] },
) {
  const finish = part.finish ?? null;
  const choice =
    kind === 'chat'
      ? { index: 0, delta: part.delta ?? {}, finish_reason: finish }
      : { text: part.delta?.content ?? '', index: 0, logprobs: null, finish_reason: finish };
  return {
    id: h.id,
    object: kind === 'chat' ? ('chat.completion.chunk' as const) : ('text_completion' as const),
    created: h.created,
    model: h.model,
    choices: [choice],
    ...(part.usage ? { usage: part.usage } : {}),
    ...(part.events?.length ? { service_events: part.events } : {}),
  };
}

/** One SSE frame of an OpenAI stream (no event ids: an OpenAI stream cannot be resumed). */
export const frame = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
