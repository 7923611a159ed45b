import { createServer as createHttpServer, type Server, type ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAiServer, type OpenAiTestServer } from '../../test/helpers/openai-server.js';
import { Code } from '../kernel/index.js';
import { LlmError, OpenAiProvider, type LlmRequest, type OpenAiProviderOptions } from './index.js';

let server: OpenAiTestServer;

beforeAll(async () => {
  server = await startOpenAiServer();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => server.reset());

const models = { small: 'model-small', medium: 'model-medium', large: 'model-large' };

function provider(opts: Partial<OpenAiProviderOptions> = {}): OpenAiProvider {
  return new OpenAiProvider({ baseUrl: server.baseUrl, apiKey: 'sk-test-123', models, timeoutMs: 10_000, ...opts });
}

const request = (over: Partial<LlmRequest> = {}): LlmRequest => ({
  messages: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'hello there' },
  ],
  tier: 'small',
  maxTokens: 123,
  temperature: 0.3,
  ...over,
});

async function rejection(p: Promise<unknown>): Promise<LlmError> {
  const err = await p.then(
    (r) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(r)}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LlmError);
  return err as LlmError;
}

/** A port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('OpenAiProvider: streaming text', () => {
  it('delivers the deltas in order and resolves with their concatenation', async () => {
    const chunks = ['Hel', 'lo', ', ', 'wor', 'ld', '! ', 'ünï', 'cødé ✓'];
    server.enqueue({ type: 'completion', content: chunks });
    const seen: string[] = [];
    const r = await provider().complete(request(), (d) => seen.push(d));
    expect(seen).toEqual(chunks);
    expect(r.text).toBe(chunks.join(''));
    expect(r.finishReason).toBe('stop');
    expect(r.provider).toBe('openai');
    expect(r.toolCalls).toBeUndefined();
  });

  it('works without a delta callback and reports a custom provider name and finish reason', async () => {
    server.enqueue({ type: 'completion', content: ['a', 'b', 'c'], finishReason: 'length' });
    const r = await provider({ providerName: 'vllm-local' }).complete(request());
    expect(r.text).toBe('abc');
    expect(r.finishReason).toBe('length');
    expect(r.provider).toBe('vllm-local');
  });

  it('sends the request fields, the API key as a Bearer token, and asks for streamed usage', async () => {
    await provider().complete(request());
    expect(server.requests).toHaveLength(1);
    const got = server.requests[0]!;
    expect(got.authorization).toBe('Bearer sk-test-123');
    expect(got.model).toBe('model-small');
    expect(got.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello there' },
    ]);
    expect(got.max_tokens).toBe(123);
    expect(got.temperature).toBe(0.3);
    expect(got.stream).toBe(true);
    expect(got.body.stream_options).toEqual({ include_usage: true });
    expect(got.body.tools).toBeUndefined();
  });

  it('chooses the model by tier, and a model override wins over the tier', async () => {
    const p = provider();
    for (const tier of ['small', 'medium', 'large'] as const) await p.complete(request({ tier }));
    await p.complete(request({ tier: 'large', model: 'my-special-model' }));
    await p.complete(request({ tier: 'medium', model: '' })); // empty override: none
    expect(server.requests.map((r) => r.model)).toEqual(['model-small', 'model-medium', 'model-large', 'my-special-model', 'model-medium']);
  });
});

describe('OpenAiProvider: usage, cost and model', () => {
  it("maps the provider's usage chunk to input/output/total tokens", async () => {
    server.enqueue({ type: 'completion', content: 'some answer', usage: { prompt_tokens: 1234, completion_tokens: 56, total_tokens: 1290 } });
    const r = await provider().complete(request());
    expect(r.usage.inputTokens).toBe(1234);
    expect(r.usage.outputTokens).toBe(56);
    expect(r.usage.totalTokens).toBe(1290);
    expect(r.usage.costUsd).toBe(0); // no prices configured
  });

  it('computes the cost from per-1k prices of the reported model', async () => {
    server.enqueue({
      type: 'completion',
      content: 'x',
      model: 'served-model-2024',
      usage: { prompt_tokens: 2000, completion_tokens: 500, total_tokens: 2500 },
    });
    const prices = { 'served-model-2024': { prompt: 0.5, completion: 1.5 }, 'model-small': { prompt: 100, completion: 100 } };
    const r = await provider({ prices }).complete(request());
    expect(r.model).toBe('served-model-2024');
    expect(r.usage.costUsd).toBeCloseTo(2 * 0.5 + 0.5 * 1.5, 10);
  });

  it('falls back to the price of the requested model when the reported one has none', async () => {
    server.enqueue({
      type: 'completion',
      content: 'x',
      model: 'served-model-unknown',
      usage: { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 },
    });
    const r = await provider({ prices: { 'model-medium': { prompt: 0.01, completion: 0.03 } } }).complete(request({ tier: 'medium' }));
    expect(r.model).toBe('served-model-unknown');
    expect(r.usage.costUsd).toBeCloseTo(0.04, 10);
  });

  it('finds no price for a model named like a prototype member (the cost is 0, not NaN)', async () => {
    for (const model of ['constructor', '__proto__', 'toString']) {
      server.enqueue({ type: 'completion', content: 'x', model, usage: { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 } });
      const r = await provider({ prices: { 'model-small': { prompt: 0.01, completion: 0.03 } } }).complete(request({ model }));
      expect(r.usage.costUsd, model).toBe(0);
    }
  });

  it('reports the requested model when the server names none, and estimates usage when it sends none', async () => {
    server.enqueue({ type: 'completion', content: 'abcdefghij', usage: null });
    const r = await provider().complete(request({ model: 'requested-model' }));
    expect(r.model).toBe('requested-model');
    expect(r.usage.outputTokens).toBe(3); // ceil(10 / 4)
    expect(r.usage.inputTokens).toBe(2 + 3); // 'be brief' (8) + 'hello there' (11)
    expect(r.usage.totalTokens).toBe(r.usage.inputTokens + r.usage.outputTokens);
  });
});

describe('OpenAiProvider: tool calls', () => {
  const tools = [
    { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    { name: 'calculator', parameters: { type: 'object', properties: { expr: { type: 'string' } } } },
  ];

  it('offers the tools as functions and reassembles streamed tool-call fragments', async () => {
    server.enqueue({
      type: 'completion',
      content: [],
      interleaveToolCalls: true,
      toolCalls: [
        { id: 'call_a', name: 'get_weather', arguments: JSON.stringify({ city: 'Zürich', unit: 'celsius' }), fragments: 4 },
        { id: 'call_b', name: 'calculator', arguments: JSON.stringify({ expr: '2 * (3 + 4)' }), fragments: 5 },
      ],
    });
    const seen: string[] = [];
    const r = await provider().complete(request({ tools, toolChoice: 'auto' }), (d) => seen.push(d));
    const body = server.requests[0]!.body;
    expect(body.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: tools[0]!.parameters } },
      { type: 'function', function: { name: 'calculator', parameters: tools[1]!.parameters } },
    ]);
    expect(body.tool_choice).toBe('auto');
    expect(r.finishReason).toBe('tool_calls');
    expect(r.text).toBe('');
    expect(seen).toEqual([]);
    expect(r.toolCalls).toEqual([
      { id: 'call_a', name: 'get_weather', arguments: '{"city":"Zürich","unit":"celsius"}' },
      { id: 'call_b', name: 'calculator', arguments: '{"expr":"2 * (3 + 4)"}' },
    ]);
    expect(JSON.parse(r.toolCalls![1]!.arguments)).toEqual({ expr: '2 * (3 + 4)' });
  });

  it('returns text and tool calls together', async () => {
    server.enqueue({ type: 'completion', content: ['Let me ', 'check.'], toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    const r = await provider().complete(request({ tools }));
    expect(r.text).toBe('Let me check.');
    expect(r.toolCalls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }]);
  });
});

describe('OpenAiProvider: tool names the API refuses', () => {
  it('offers `mcp.<server>.<tool>` under a valid function name, in the history too, and maps the call back', async () => {
    server.enqueue({ type: 'completion', content: [], toolCalls: [{ id: 'c2', name: 'mcp_github_create_issue', arguments: '{"title":"b"}' }] });
    const mcpTools = [
      { name: 'mcp.github.create_issue', parameters: { type: 'object', properties: { title: { type: 'string' } } } },
      { name: 'calculator', parameters: { type: 'object', properties: {} } },
    ];
    const r = await provider().complete(
      request({
        tools: mcpTools,
        messages: [
          { role: 'user', content: 'file two issues' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'mcp.github.create_issue', arguments: '{"title":"a"}' }] },
          { role: 'tool', content: 'created #1', toolCallId: 'c1' },
        ],
      }),
    );
    const body = server.requests.at(-1)!.body;
    expect(body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['mcp_github_create_issue', 'calculator']);
    expect(body.messages[1].tool_calls[0].function.name).toBe('mcp_github_create_issue');
    expect(r.toolCalls).toEqual([{ id: 'c2', name: 'mcp.github.create_issue', arguments: '{"title":"b"}' }]);
  });
});

describe('OpenAiProvider: errors', () => {
  it.each([
    [429, true],
    [500, true],
    [502, true],
    [503, true],
    [400, false],
    [401, false],
    [404, false],
  ])('HTTP %i -> LlmError retryable=%s, naming the status', async (status, retryable) => {
    server.enqueue({ type: 'error', status, message: `scripted failure ${status}` });
    const err = await rejection(provider().complete(request()));
    expect(err.retryable).toBe(retryable);
    expect(err.status).toBe(status);
    expect(err.message).toContain(String(status));
    expect(err.message).toContain(`scripted failure ${status}`);
    expect(err.code).toBe(retryable ? Code.Unavailable : Code.FailedPrecondition);
    expect(server.requests).toHaveLength(1); // the SDK itself does not retry
  });

  it('a connection reset before the response -> retryable', async () => {
    server.enqueue({ type: 'reset' });
    const err = await rejection(provider().complete(request()));
    expect(err.retryable).toBe(true);
  });

  it('a connection reset in the middle of the stream -> retryable, after the deltas that arrived', async () => {
    server.enqueue({ type: 'reset', content: ['partial ', 'answer'] });
    const seen: string[] = [];
    const err = await rejection(provider().complete(request(), (d) => seen.push(d)));
    expect(err.retryable).toBe(true);
    expect(seen.join('')).toBe('partial answer');
  });

  it('nothing listening -> retryable connection error', async () => {
    const port = await closedPort();
    const p = new OpenAiProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'k', models, timeoutMs: 5000 });
    const err = await rejection(p.complete(request()));
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/connection/i);
  });

  it('an error object inside the stream -> LlmError with its message', async () => {
    server.enqueue({ type: 'stream-error', content: ['so far'], message: 'model overloaded mid-stream' });
    const err = await rejection(provider().complete(request()));
    expect(err.message).toContain('model overloaded mid-stream');
    expect(err.retryable).toBe(true);
  });

  it('a stream that stops sending -> retryable timeout instead of waiting forever', async () => {
    server.enqueue({ type: 'stall', content: ['one ', 'two'] });
    const seen: string[] = [];
    const err = await rejection(provider({ timeoutMs: 1000 }).complete(request(), (d) => seen.push(d)));
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/timed out/);
    expect(seen.join('')).toBe('one two');
  });
});

describe('OpenAiProvider: abort', () => {
  it('an already aborted signal rejects without calling the server', async () => {
    const ac = new AbortController();
    ac.abort();
    const err = await rejection(provider().complete(request({ signal: ac.signal })));
    expect(err.message).toMatch(/aborted/);
    expect(server.requests).toHaveLength(0);
  });

  it('aborting mid-stream rejects (never resolves with the partial text) and closes the connection', async () => {
    server.enqueue({ type: 'stall', content: ['first ', 'second '] });
    const ac = new AbortController();
    const seen: string[] = [];
    const err = await rejection(
      provider().complete(request({ signal: ac.signal }), (d) => {
        seen.push(d);
        if (seen.length === 1) ac.abort();
      }),
    );
    expect(err.message).toMatch(/aborted/);
    expect(err.retryable).toBe(true);
    expect(seen[0]).toBe('first ');
    await expect.poll(() => server.closedEarly).toBeGreaterThanOrEqual(1);
  });

  it('aborting while waiting for the response headers rejects', async () => {
    server.enqueue({ type: 'hang' });
    const ac = new AbortController();
    const pending = provider().complete(request({ signal: ac.signal }));
    await expect.poll(() => server.requests.length).toBe(1);
    ac.abort();
    const err = await rejection(pending);
    expect(err.message).toMatch(/aborted/);
    await expect.poll(() => server.closedEarly).toBeGreaterThanOrEqual(1);
  });
});

describe('OpenAiProvider: reading the stream', () => {
  // A bare SSE server: each test writes the body byte by byte as it needs, and may wait for
  // the client to have handled a delta before writing more (so the rest is another read).
  let write: (res: ServerResponse) => void;
  let raw: Server;
  let rawProvider: (timeoutMs?: number) => OpenAiProvider;
  beforeAll(async () => {
    raw = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        write(res);
      });
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', () => r()));
    const { port } = raw.address() as { port: number };
    rawProvider = (timeoutMs = 10_000) => new OpenAiProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'k', models, timeoutMs });
  });
  afterAll(async () => {
    raw.closeAllConnections();
    await new Promise<void>((r) => raw.close(() => r()));
  });

  const chunk = (content: string, extra: object = {}) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'raw-model', choices: [{ index: 0, delta: { content }, finish_reason: null }], ...extra })}\n\n`;
  const closed = (res: ServerResponse) => new Promise<void>((r) => res.on('close', () => r()));

  it('reassembles an event and a UTF-8 character split across network reads', async () => {
    const second = Buffer.from(chunk('naïve ✓ done'));
    const cut = second.indexOf(Buffer.from('✓')) + 1; // inside the three bytes of ✓
    let rest = () => {};
    write = (res) => {
      res.write(Buffer.concat([Buffer.from(chunk('first ')), second.subarray(0, cut)]));
      rest = () => res.end(Buffer.concat([second.subarray(cut), Buffer.from('data: [DONE]\n\n')]));
    };
    const seen: string[] = [];
    const r = await rawProvider().complete(request(), (d) => {
      seen.push(d);
      if (seen.length === 1) rest();
    });
    expect(seen).toEqual(['first ', 'naïve ✓ done']);
    expect(r.model).toBe('raw-model');
  });

  it('takes CRLF framing, skips comments, and ignores what follows [DONE]', async () => {
    write = (res) =>
      res.end(
        [
          ': keep-alive\r\n\r\n',
          chunk('a').replaceAll('\n', '\r\n'),
          chunk('b', { choices: [{ index: 0, delta: {}, finish_reason: 'length' }] }),
          'data: [DONE]\n\n',
          chunk('after'),
        ].join(''),
      );
    const seen: string[] = [];
    const r = await rawProvider().complete(request(), (d) => seen.push(d));
    expect(seen).toEqual(['a']);
    expect(r.text).toBe('a');
    expect(r.finishReason).toBe('length');
  });

  it('a connection cut in the middle of an event -> retryable, the half event never delivered', async () => {
    let cutNow = () => {};
    write = (res) => {
      res.write(chunk('partial ') + 'data: {"choices":[{"delta":{"content":"lo');
      cutNow = () => res.socket?.destroy();
    };
    const seen: string[] = [];
    const err = await rejection(
      rawProvider().complete(request(), (d) => {
        seen.push(d);
        cutNow();
      }),
    );
    expect(err.retryable).toBe(true);
    expect(err.message).toBe('LLM provider error: terminated'); // undici's word for a body cut short
    expect(seen).toEqual(['partial ']);
  });

  it('`event: error` -> LlmError with its message, and the connection is closed', async () => {
    let res!: ServerResponse;
    write = (r) => {
      res = r;
      r.write(chunk('so far') + 'event: error\ndata: {"message":"upstream overloaded","type":"server_error"}\n\n'); // never ended
    };
    const err = await rejection(rawProvider().complete(request()));
    expect(err.message).toBe('LLM provider error: upstream overloaded');
    expect(err.retryable).toBe(true);
    await closed(res);
  });

  it('data that is not JSON -> retryable LlmError', async () => {
    write = (res) => res.end('data: {"choices": [\n\n');
    const err = await rejection(rawProvider().complete(request()));
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/JSON/);
  });

  it('each chunk pushes the idle timeout back: a slow but steady stream completes', async () => {
    write = (res) => {
      let n = 0;
      const next = () => {
        if (n === 4) return res.end('data: [DONE]\n\n');
        res.write(chunk(`t${n++} `));
        setTimeout(next, 150);
      };
      next();
    };
    const r = await rawProvider(400).complete(request()); // 600 ms in all, never 400 ms idle
    expect(r.text).toBe('t0 t1 t2 t3 ');
  });

  it('an abort from the delta callback stops at once, even with more events in the same read', async () => {
    write = (res) => res.end(chunk('one ') + chunk('two ') + 'data: [DONE]\n\n');
    const ac = new AbortController();
    const seen: string[] = [];
    const err = await rejection(
      rawProvider().complete(request({ signal: ac.signal }), (d) => {
        seen.push(d);
        ac.abort();
      }),
    );
    expect(err.message).toMatch(/aborted/);
    expect(seen).toEqual(['one ']);
  });
});

describe('openai test server: non-streaming mode (used through the SDK directly)', () => {
  it('returns a whole chat.completion with text, tool calls and usage', async () => {
    const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'sk-x', maxRetries: 0 });
    server.enqueue(
      { type: 'completion', content: 'plain answer', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
      { type: 'completion', toolCalls: [{ id: 'c1', name: 'f', arguments: '{"a":1}' }] },
      { type: 'error', status: 429, message: 'slow down' },
    );
    const a = await client.chat.completions.create({ model: 'm1', messages: [{ role: 'user', content: 'q' }], max_tokens: 9 });
    expect(a.choices[0]!.message.content).toBe('plain answer');
    expect(a.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect(a.model).toBe('m1');
    const b = await client.chat.completions.create({ model: 'm2', messages: [{ role: 'user', content: 'q' }] });
    expect(b.choices[0]!.finish_reason).toBe('tool_calls');
    expect(b.choices[0]!.message.tool_calls).toEqual([{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }]);
    await expect(client.chat.completions.create({ model: 'm3', messages: [{ role: 'user', content: 'q' }] })).rejects.toMatchObject({ status: 429 });
    expect(server.requests.map((r) => [r.model, r.stream, r.max_tokens])).toEqual([
      ['m1', false, 9],
      ['m2', false, undefined],
      ['m3', false, undefined],
    ]);
  });
});
