/**
 * A valid completion body translated into a task (request-schema.ts validates it).
 *
 * Translation (spec, "OpenAI-compatible layer"): the last user message is the task's query;
 * the first system message is its system prompt (`context.system_prompt`); every other message
 * except the system ones is the conversation history (`context.conversation_history`, which
 * the workflow then uses instead of the session's earlier turns); the model id picks the
 * workflow mode and research strategy; max_tokens (capped at 16384, default the model's;
 * `max_completion_tokens` is an alias), temperature, top_p, stop (a string or up to 4) and the
 * penalties go to every model call of the task (`context.model_settings`); `user` is recorded
 * with the task (`context.end_user`) and names the session when no X-Session-ID is given. A
 * message's `name` is shown to the model as "<name>: " before its content.
 */
import type { OpenAiModel, OpenAiModelTable } from './models.js';
import { MAX_TOKENS_CAP } from './models.js';
import { checkChatBody, checkLegacyBody, textOf, type ChatBody, type LegacyBody } from './request-schema.js';

/** A chat or legacy completion request, checked and translated. */
export interface CompletionRequest {
  model: OpenAiModel;
  query: string;
  systemPrompt?: string;
  history: { role: 'user' | 'assistant'; content: string }[];
  stream: boolean;
  includeUsage: boolean;
  /** The request's max_tokens capped at 16384, else the model's default. */
  maxTokens: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  user?: string;
  /** The first user message (session derivation). */
  firstUser: string;
  /** Characters of every message (the token estimate of the rate limit). */
  chars: number;
}

/** The sampling fields both request forms share. */
function common(body: ChatBody | LegacyBody, m: OpenAiModel) {
  const mct = 'max_completion_tokens' in body ? (body.max_completion_tokens ?? undefined) : undefined;
  const stop = typeof body.stop === 'string' ? [body.stop] : (body.stop ?? undefined);
  const num = (v: number | null | undefined) => v ?? undefined;
  return {
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage === true,
    maxTokens: Math.min(body.max_tokens ?? mct ?? m.maxTokens, MAX_TOKENS_CAP),
    temperature: num(body.temperature),
    topP: num(body.top_p),
    presencePenalty: num(body.presence_penalty),
    frequencyPenalty: num(body.frequency_penalty),
    ...(stop?.length ? { stop } : {}),
    ...(body.user ? { user: body.user } : {}),
  };
}

export function parseChatRequest(raw: unknown, table: OpenAiModelTable): CompletionRequest {
  const { body, model: m } = checkChatBody(raw, table);
  const msgs = body.messages.map((x) => {
    const name = x.name ?? undefined;
    const text = textOf(x.content) ?? '';
    // The author's name, as the model sees it.
    return { role: x.role, text: name && x.role !== 'system' ? `${name}: ${text}` : text, raw: text };
  });
  const last = msgs.map((x) => x.role).lastIndexOf('user');
  const system = msgs.find((x) => x.role === 'system');
  const history = msgs.filter((x, i) => x.role !== 'system' && i !== last).map((x) => ({ role: x.role as 'user' | 'assistant', content: x.text }));
  return {
    model: m,
    query: msgs[last]!.text,
    ...(system?.text ? { systemPrompt: system.text } : {}),
    history,
    firstUser: msgs.find((x) => x.role === 'user')!.raw,
    chars: msgs.reduce((n, x) => n + x.text.length, 0),
    ...common(body, m),
  };
}

/** POST /v1/completions: `prompt` (a string, or an array of one string) is the query; no history. */
export function parseLegacyRequest(raw: unknown, table: OpenAiModelTable): CompletionRequest {
  const { body, model: m } = checkLegacyBody(raw, table);
  const prompt = Array.isArray(body.prompt) ? body.prompt[0]! : body.prompt;
  return { model: m, query: prompt, history: [], firstUser: prompt, chars: prompt.length, ...common(body, m) };
}

/**
 * The task context a request becomes (the model's own context first). The messages are the
 * conversation: their history, even an empty one, replaces the session's turns, except when
 * the client names a session (X-Session-ID) and sends no earlier messages: then the session
 * keeps the context (its earlier turns are the history).
 */
export function taskContext(r: CompletionRequest, o: { sessionNamed: boolean }): Record<string, unknown> {
  const settings: Record<string, unknown> = { max_tokens: r.maxTokens };
  if (r.temperature !== undefined) settings.temperature = r.temperature;
  if (r.topP !== undefined) settings.top_p = r.topP;
  if (r.stop) settings.stop = r.stop;
  if (r.presencePenalty !== undefined) settings.presence_penalty = r.presencePenalty;
  if (r.frequencyPenalty !== undefined) settings.frequency_penalty = r.frequencyPenalty;
  return {
    ...r.model.context,
    ...(r.model.mode === 'research' && !r.model.researchStrategy ? { force_research: true } : {}),
    ...(r.systemPrompt ? { system_prompt: r.systemPrompt } : {}),
    ...(r.history.length || !o.sessionNamed ? { conversation_history: r.history } : {}),
    model_settings: settings,
    ...(r.user ? { end_user: r.user } : {}),
  };
}
