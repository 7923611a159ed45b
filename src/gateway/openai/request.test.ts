/**
 * The /v1 request bodies: every refusal in OpenAI's words, with the field at fault and in the
 * order OpenAI's checks find them (these answers are the ones the hand-written validator gave
 * before the schema replaced it), and the translation of a valid body into a task.
 */
import { describe, expect, it } from 'vitest';
import { OpenAiError } from './errors.js';
import { DEFAULT_MODEL_TABLE } from './models.js';
import { parseChatRequest, parseLegacyRequest, taskContext } from './request.js';

const CHAT: [unknown, [number, string | null, string]][] = [
  [null, [400, null, 'request body must be a JSON object']],
  [[], [400, null, 'request body must be a JSON object']],
  [{}, [400, 'messages', 'messages must be a non-empty array']],
  [{ messages: [] }, [400, 'messages', 'messages must be a non-empty array']],
  [{ messages: [1] }, [400, 'messages[0]', 'messages[0] must be an object']],
  [{ messages: [{ role: 'bot', content: 'x' }] }, [400, 'messages[0].role', 'messages[0].role must be system, user or assistant']],
  [{ messages: [{ role: 'user' }] }, [400, 'messages[0].content', 'messages[0].content is required']],
  [{ messages: [{ role: 'user', content: null }] }, [400, 'messages[0].content', 'messages[0].content is required']],
  [{ messages: [{ role: 'user', content: 5 }] }, [400, 'messages[0].content', 'messages[0].content must be a string']],
  [
    { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] },
    [400, 'messages[0].content', 'messages[0].content[0]: only text content is supported ({type: "text", text})'],
  ],
  [{ messages: [{ role: 'user', content: 'x', name: 'bad name' }] }, [400, 'messages[0].name', 'messages[0].name must be 1-64 letters, digits, _ or -']],
  [{ messages: [{ role: 'user', content: 'x', tool_calls: [1] }] }, [400, 'messages[0].tool_calls', 'messages[0].tool_calls is not supported']],
  [{ messages: [{ role: 'system', content: 's' }] }, [400, 'messages', 'messages must contain a user message']],
  [{ messages: [{ role: 'user', content: '  ' }] }, [400, 'messages[0].content', 'messages[0].content: the last user message is empty']],
  [{ messages: [{ role: 'user', content: 'x' }, { role: 'bad' }] }, [400, 'messages[1].role', 'messages[1].role must be system, user or assistant']],
  [
    { messages: [{ role: 'user', content: 'x', tool_calls: [1] }, { role: 'bad' }] },
    [400, 'messages[0].tool_calls', 'messages[0].tool_calls is not supported'],
  ],
  [{ messages: [{ role: 'user', content: 'hi' }], model: 5 }, [400, 'model', 'model must be a string']],
  [
    { messages: [{ role: 'user', content: 'hi' }], model: 'nope' },
    [404, 'model', "The model 'nope' does not exist. Use GET /v1/models to list the available models."],
  ],
  [
    { messages: [{ role: 'user', content: 'hi' }], model: 'svc-ads-research' },
    [404, 'model', "The model 'svc-ads-research' is available in the hosted edition only."],
  ],
  [{ messages: [{ role: 'user', content: 'hi' }], frob: 1 }, [400, 'frob', 'Unrecognized request argument supplied: frob']],
  [{ messages: [{ role: 'user', content: 'hi' }], tools: [1] }, [400, 'tools', 'tools is not supported by this service']],
  [{ messages: [{ role: 'user', content: 'hi' }], frob: 1, tools: [1] }, [400, 'frob', 'Unrecognized request argument supplied: frob']],
  [{ tools: [1], frob: 1, messages: [{ role: 'user', content: 'hi' }] }, [400, 'tools', 'tools is not supported by this service']],
  [{ frob: 1 }, [400, 'frob', 'Unrecognized request argument supplied: frob']],
  [{ messages: [{ role: 'user', content: 'hi' }], stream: 'yes' }, [400, 'stream', 'stream must be a boolean']],
  [
    { messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true } },
    [400, 'stream_options', "The 'stream_options' parameter is only allowed when 'stream' is enabled."],
  ],
  [
    { messages: [{ role: 'user', content: 'hi' }], stream_options: 5 },
    [400, 'stream_options', "The 'stream_options' parameter is only allowed when 'stream' is enabled."],
  ],
  [
    { messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { x: 1 } },
    [400, 'stream_options.x', 'stream_options.x is not supported; only include_usage'],
  ],
  [{ messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: 5 }, [400, 'stream_options', 'stream_options must be an object']],
  [
    { messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: 'y' } },
    [400, 'stream_options.include_usage', 'stream_options.include_usage must be a boolean'],
  ],
  [{ messages: [{ role: 'user', content: 'hi' }], n: 2 }, [400, 'n', 'n must be 1: only one choice per request is supported']],
  [{ messages: [{ role: 'user', content: 'hi' }], max_tokens: 0 }, [400, 'max_tokens', 'max_tokens must be a positive integer']],
  [{ messages: [{ role: 'user', content: 'hi' }], max_tokens: 1.5 }, [400, 'max_tokens', 'max_tokens must be a positive integer']],
  [
    { messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, max_completion_tokens: 11 },
    [400, 'max_completion_tokens', 'max_tokens and max_completion_tokens differ; give one'],
  ],
  [
    { messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 0 },
    [400, 'max_completion_tokens', 'max_completion_tokens must be a positive integer'],
  ],
  [{ messages: [{ role: 'user', content: 'hi' }], stop: '' }, [400, 'stop', 'stop must be a string or an array of at most 4 non-empty strings']],
  [
    { messages: [{ role: 'user', content: 'hi' }], stop: ['a', 'b', 'c', 'd', 'e'] },
    [400, 'stop', 'stop must be a string or an array of at most 4 non-empty strings'],
  ],
  [{ messages: [{ role: 'user', content: 'hi' }], stop: [1] }, [400, 'stop', 'stop must be a string or an array of at most 4 non-empty strings']],
  [
    {
      messages: [{ role: 'user', content: 'hi' }],
      user: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
    },
    [400, 'user', 'user must be a string of at most 256 characters'],
  ],
  [{ messages: [{ role: 'user', content: 'hi' }], user: 5 }, [400, 'user', 'user must be a string of at most 256 characters']],
  [{ messages: [{ role: 'user', content: 'hi' }], temperature: 3 }, [400, 'temperature', 'temperature must be a number from 0 to 2']],
  [{ messages: [{ role: 'user', content: 'hi' }], top_p: 2 }, [400, 'top_p', 'top_p must be a number from 0 to 1']],
  [{ messages: [{ role: 'user', content: 'hi' }], presence_penalty: -3 }, [400, 'presence_penalty', 'presence_penalty must be a number from -2 to 2']],
  [{ messages: [{ role: 'user', content: 'hi' }], frequency_penalty: 'x' }, [400, 'frequency_penalty', 'frequency_penalty must be a number from -2 to 2']],
  [{ messages: [], temperature: 5 }, [400, 'messages', 'messages must be a non-empty array']],
  [
    { messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true }, n: 3 },
    [400, 'stream_options', "The 'stream_options' parameter is only allowed when 'stream' is enabled."],
  ],
  [{ messages: [{ role: 'user', content: 'hi' }], user: 5, temperature: 9 }, [400, 'user', 'user must be a string of at most 256 characters']],
];
const LEGACY: [unknown, [number, string | null, string]][] = [
  [{}, [400, 'prompt', 'prompt must be a non-empty string']],
  [{ prompt: '' }, [400, 'prompt', 'prompt must be a non-empty string']],
  [{ prompt: ['a', 'b'] }, [400, 'prompt', 'prompt must be a string (an array must hold exactly one string: one completion per request)']],
  [{ prompt: [] }, [400, 'prompt', 'prompt must be a string (an array must hold exactly one string: one completion per request)']],
  [{ prompt: [1] }, [400, 'prompt', 'prompt must be a non-empty string']],
  [{ prompt: 5 }, [400, 'prompt', 'prompt must be a non-empty string']],
  [{ prompt: null }, [400, 'prompt', 'prompt must be a non-empty string']],
  [{ prompt: 'x', echo: true }, [400, 'echo', 'echo is not supported by this service']],
  [{ prompt: 'x', best_of: 2 }, [400, 'best_of', 'best_of is not supported by this service']],
  [{ prompt: 'x', messages: [{ role: 'user', content: 'hi' }] }, [400, 'messages', 'Unrecognized request argument supplied: messages']],
  [{ prompt: 'x', max_completion_tokens: 5 }, [400, 'max_completion_tokens', 'Unrecognized request argument supplied: max_completion_tokens']],
  [{ prompt: 5, temperature: 9 }, [400, 'prompt', 'prompt must be a non-empty string']],
  [{ prompt: ['a', 'b'], stop: 5 }, [400, 'prompt', 'prompt must be a string (an array must hold exactly one string: one completion per request)']],
];

const refusal = (f: () => unknown): [number, string | null, string] | undefined => {
  try {
    f();
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(OpenAiError);
    const o = e as OpenAiError;
    return [o.status, o.param, o.message];
  }
};

describe('/v1 request bodies', () => {
  it.each(CHAT)('chat %j is refused as OpenAI would', (body, expected) => {
    expect(refusal(() => parseChatRequest(body, DEFAULT_MODEL_TABLE))).toEqual(expected);
  });

  it.each(LEGACY)('legacy %j is refused as OpenAI would', (body, expected) => {
    expect(refusal(() => parseLegacyRequest(body, DEFAULT_MODEL_TABLE))).toEqual(expected);
  });

  it("accepts OpenAI's defaults for the fields it cannot honour, and null for absent", () => {
    const r = parseChatRequest(
      { messages: [{ role: 'user', content: 'hi' }], tools: [], logprobs: false, seed: null, n: 1, stream: null, temperature: null, model: null },
      DEFAULT_MODEL_TABLE,
    );
    expect(r).toMatchObject({ query: 'hi', stream: false, model: { id: 'svc-chat' }, maxTokens: 4096 });
    expect(r.temperature).toBeUndefined();
    expect(parseLegacyRequest({ prompt: ['p'], best_of: 1, echo: false, suffix: null }, DEFAULT_MODEL_TABLE).query).toBe('p');
  });

  it('translates messages, names and sampling fields into the task', () => {
    const r = parseChatRequest(
      {
        model: 'svc-chat',
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'first' },
              { type: 'text', text: 'part' },
            ],
            name: 'ann',
          },
          { role: 'assistant', content: null },
          { role: 'system', content: 'ignored' },
          { role: 'user', content: 'last' },
        ],
        stream: true,
        stream_options: { include_usage: true },
        max_completion_tokens: 50_000,
        stop: 'END',
        temperature: 0.2,
        user: 'u-1',
      },
      DEFAULT_MODEL_TABLE,
    );
    expect(r).toMatchObject({
      query: 'last',
      systemPrompt: 'Be brief.',
      history: [
        { role: 'user', content: 'ann: first\npart' },
        { role: 'assistant', content: '' },
      ],
      firstUser: 'first\npart',
      stream: true,
      includeUsage: true,
      maxTokens: 16384,
      stop: ['END'],
      temperature: 0.2,
      user: 'u-1',
    });
    expect(taskContext(r, { sessionNamed: false })).toEqual({
      system_prompt: 'Be brief.',
      conversation_history: r.history,
      model_settings: { max_tokens: 16384, temperature: 0.2, stop: ['END'] },
      end_user: 'u-1',
    });
  });
});
