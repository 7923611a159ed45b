/**
 * The OpenAPI path items and component schemas of the OpenAI-compatible layer (the gateway's
 * openapi.ts spreads them into /openapi.json). The request bodies are the very schemas that
 * validate them (request.ts).
 */
import type { TSchema } from '@sinclair/typebox';
import { ChatCompletionRequestSchema, CompletionRequestSchema } from './request-schema.js';

/** Strips TypeBox's symbol keys so the document is plain JSON Schema. */
const plain = (s: TSchema) => JSON.parse(JSON.stringify(s)) as Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
const oaiError = (description: string) => ({ description, content: { 'application/json': { schema: ref('OpenAiError') } } });
const header = (description: string, type: 'string' | 'integer' = 'string') => ({ description, schema: { type } });

const RATE_HEADERS = {
  'X-RateLimit-Limit-Requests': header('Requests per minute for this key and model', 'integer'),
  'X-RateLimit-Remaining-Requests': header('Requests left in the current minute', 'integer'),
  'X-RateLimit-Limit-Tokens': header('Tokens per minute for this key and model', 'integer'),
  'X-RateLimit-Remaining-Tokens': header('Tokens left in the current minute (usage is counted when a completion ends)', 'integer'),
  'X-RateLimit-Reset-Requests': header('Time until the window resets, as OpenAI writes it (e.g. "12s")'),
  'X-RateLimit-Reset-Tokens': header('Time until the token window resets (e.g. "12s")'),
};
const SESSION_HEADERS = {
  'X-Session-ID': header('The session id to send next time; only when a session was created or the given one collided'),
  'X-Service-Session-ID': header("The service's session UUID (GET /api/v1/sessions/{sessionId}); with X-Session-ID"),
  'X-Workflow-ID': header('The task that produced the completion (GET /api/v1/tasks/{id})'),
};

const ERRORS = {
  400: oaiError(
    'invalid_request_error / invalid_request: bad JSON, a field out of range (temperature 0-2, penalties -2..2, n other than 1), an unsupported or unknown field',
  ),
  401: oaiError('authentication_error / invalid_api_key'),
  404: oaiError('invalid_request_error / model_not_found'),
  429: { ...oaiError('rate_limit_error / rate_limit_exceeded (per key and model)'), headers: { 'Retry-After': header('Seconds', 'integer') } },
  500: oaiError('server_error / internal_error: the task failed or was cancelled'),
  503: oaiError('server_error / service_unavailable: the task queue (NATS) is unreachable'),
};

const SAMPLING_DOC =
  "max_tokens (max_completion_tokens) is capped at 16384 (default: the model's); temperature 0-2 (default TEMPERATURE, 0.7), top_p 0-1, presence_penalty and frequency_penalty -2..2, stop (a string or up to 4): every model call of the task uses them. " +
  'n must be 1. user: recorded with the task and, without X-Session-ID, names the session. ' +
  'Fields OpenAI defines that this service cannot honour (tools, response_format, logprobs, seed, ...) are refused with 400, as are unknown fields.';

/** Component schemas of the layer (openapi.ts adds them to components.schemas). */
export const openAiSchemas: Record<string, Record<string, unknown>> = {
  OpenAiError: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'code'],
        properties: {
          message: { type: 'string' },
          type: { type: 'string', enum: ['invalid_request_error', 'authentication_error', 'permission_error', 'rate_limit_error', 'server_error'] },
          param: { type: 'string', nullable: true, description: 'The request field at fault, if any' },
          code: { type: 'string', nullable: true },
        },
      },
    },
  },
  OpenAiModel: {
    type: 'object',
    required: ['id', 'object', 'created', 'owned_by'],
    properties: { id: { type: 'string' }, object: { type: 'string', enum: ['model'] }, created: { type: 'integer' }, owned_by: { type: 'string' } },
  },
  OpenAiModelList: {
    type: 'object',
    required: ['object', 'data'],
    properties: { object: { type: 'string', enum: ['list'] }, data: { type: 'array', items: ref('OpenAiModel') } },
  },
  OpenAiUsage: {
    type: 'object',
    required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
    properties: { prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
  },
  ChatCompletionRequest: plain(ChatCompletionRequestSchema),
  ChatCompletion: {
    type: 'object',
    required: ['id', 'object', 'created', 'model', 'choices', 'usage'],
    properties: {
      id: { type: 'string', description: 'chatcmpl-<task id>' },
      object: { type: 'string', enum: ['chat.completion'] },
      created: { type: 'integer' },
      model: { type: 'string' },
      choices: {
        type: 'array',
        items: {
          type: 'object',
          required: ['index', 'message', 'finish_reason'],
          properties: {
            index: { type: 'integer' },
            message: {
              type: 'object',
              required: ['role', 'content'],
              properties: { role: { type: 'string', enum: ['assistant'] }, content: { type: 'string' } },
            },
            finish_reason: { type: 'string', enum: ['stop'] },
          },
        },
      },
      usage: ref('OpenAiUsage'),
    },
  },
  CompletionRequest: plain(CompletionRequestSchema),
  TextCompletion: {
    type: 'object',
    required: ['id', 'object', 'created', 'model', 'choices', 'usage'],
    properties: {
      id: { type: 'string', description: 'cmpl-<task id>' },
      object: { type: 'string', enum: ['text_completion'] },
      created: { type: 'integer' },
      model: { type: 'string' },
      choices: {
        type: 'array',
        items: {
          type: 'object',
          required: ['text', 'index', 'finish_reason'],
          properties: {
            text: { type: 'string' },
            index: { type: 'integer' },
            logprobs: { type: 'object', nullable: true },
            finish_reason: { type: 'string', enum: ['stop'] },
          },
        },
      },
      usage: ref('OpenAiUsage'),
    },
  },
};

const STREAM_DOC =
  'With stream: true, Server-Sent Events: the first chunk carries delta.role "assistant"; content chunks carry delta.content as the answer\'s model streams it ' +
  '(the text a workflow marks as its final answer, in every mode; a remainder the stream did not carry comes before the end); ' +
  'chunks with an empty delta carry service_events (forwarded types: WORKFLOW_STARTED/PAUSING/PAUSED/RESUMED/CANCELLING/CANCELLED, AGENT_STARTED/COMPLETED/THINKING, ' +
  'TOOL_INVOKED/OBSERVATION, PROGRESS, DATA_PROCESSING, WAITING, ERROR_RECOVERY, TEAM_*, ROLE_ASSIGNED, DELEGATION, DEPENDENCY_SATISFIED, BUDGET_THRESHOLD, APPROVAL_*); ' +
  'the final chunk has an empty delta, finish_reason "stop" and, with stream_options.include_usage, usage; then data: [DONE]. A failure after the head is a chunk {"error": {...}}. ' +
  'No event ids: the stream cannot be resumed. A client that disconnects (streaming or not) cancels its task. ' +
  'Non-streaming: the answer when the task ends, at most OPENAI_COMPLETION_TIMEOUT_SECONDS (35 minutes; then 504 and the task is cancelled).';

const SESSION_DOC =
  'Sessions: X-Session-ID names the session (UUID or external id); without it the session id is derived from a hash of `user`, else of the first system and first user message. ' +
  "X-Session-ID and X-Service-Session-ID come back when a session is created, or when the given one is not usable (another owner's, or deleted: a new one is made).";

const RATE_DOC = 'Rate limits per API key and model: OPENAI_RATE_LIMIT_REQUESTS (60) requests and OPENAI_RATE_LIMIT_TOKENS (200,000) tokens per minute.';

export const openAiPaths = {
  '/v1/chat/completions': {
    post: {
      summary: "Chat completion (OpenAI-compatible), streaming and not: the messages become a task of the model's workflow mode",
      description: `Translation: the last user message is the query, the first system message the system prompt, the other non-system messages the conversation history. ${SAMPLING_DOC} ${STREAM_DOC} ${SESSION_DOC} ${RATE_DOC}`,
      operationId: 'openaiChatCompletions',
      security,
      parameters: [{ name: 'X-Session-ID', in: 'header', required: false, schema: { type: 'string' }, description: 'Session id' }],
      requestBody: { required: true, content: { 'application/json': { schema: ref('ChatCompletionRequest') } } },
      responses: {
        200: {
          description: 'The completion (application/json), or with stream: true text/event-stream chunks (chat.completion.chunk)',
          headers: { ...RATE_HEADERS, ...SESSION_HEADERS },
          content: { 'application/json': { schema: ref('ChatCompletion') }, 'text/event-stream': { schema: { type: 'string' } } },
        },
        ...ERRORS,
        504: oaiError('server_error / timeout: not finished within 35 minutes (non-streaming); the task is cancelled'),
      },
    },
  },
  '/v1/completions': {
    post: {
      summary: 'Legacy completion (OpenAI-compatible): `prompt` is the query, mapped like a chat completion without history',
      description: `${SAMPLING_DOC} suffix, echo, logprobs and best_of other than 1 are refused. Streaming as for chat completions, with text_completion chunks (choices[].text). ${SESSION_DOC} ${RATE_DOC}`,
      operationId: 'openaiCompletions',
      security,
      parameters: [{ name: 'X-Session-ID', in: 'header', required: false, schema: { type: 'string' }, description: 'Session id' }],
      requestBody: { required: true, content: { 'application/json': { schema: ref('CompletionRequest') } } },
      responses: {
        200: {
          description: 'The completion, or with stream: true text/event-stream chunks',
          headers: { ...RATE_HEADERS, ...SESSION_HEADERS },
          content: { 'application/json': { schema: ref('TextCompletion') }, 'text/event-stream': { schema: { type: 'string' } } },
        },
        ...ERRORS,
        504: oaiError('server_error / timeout'),
      },
    },
  },
  '/v1/models': {
    get: {
      summary: 'The models (OpenAI-compatible): the model table (OPENAI_MODELS_CONFIG_PATH); hosted-only models are absent',
      operationId: 'openaiListModels',
      security,
      responses: { 200: { description: 'OK', content: { 'application/json': { schema: ref('OpenAiModelList') } } }, 401: ERRORS[401] },
    },
  },
  '/v1/models/{model}': {
    get: {
      summary: 'One model; its description in the X-Model-Description header',
      operationId: 'openaiGetModel',
      security,
      parameters: [{ name: 'model', in: 'path', required: true, schema: { type: 'string' }, description: 'Model id' }],
      responses: {
        200: {
          description: 'OK',
          headers: { 'X-Model-Description': header('What the model runs (mode, strategy)') },
          content: { 'application/json': { schema: ref('OpenAiModel') } },
        },
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
};
