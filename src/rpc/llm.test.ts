// LLMService (./llm.ts) through an in-memory Connect router behind the real authentication
// interceptor, over a scripted provider: argument checks name the field (InvalidArgument)
// before any model call, a provider's own failures keep their code, an unexpected one is
// Internal with its message hidden and logged once, the stream carries the deltas then the
// answer (or the mapped error), and Embed / ListModels without a catalogue are
// FailedPrecondition. No sockets, no model.
import type { MessageInitShape } from '@bufbuild/protobuf';
import { Code, createClient, createRouterTransport } from '@connectrpc/connect';
import { describe, expect, it, vi } from 'vitest';
import { ModelTier } from '../gen/svc/v1/common_pb.js';
import { type CompleteRequestSchema, LLMService } from '../gen/svc/v1/llm_pb.js';
import { SYSTEM_CALLER, callAs, unavailable, type Logger } from '../kernel/index.js';
import type { LlmProvider, LlmRequest, LlmResult, UsageStore } from '../llm/index.js';
import { clientAuthInterceptor, serverAuthInterceptor } from './auth.js';
import { TOKEN_ESTIMATE_METHOD, createLlmService } from './llm.js';
import { rpcFailure } from '../../test/helpers/connect.js';

const TOKEN = 'unit-test-internal-token-0123456789abcdef';
const asSystem = callAs(SYSTEM_CALLER);
const hello = [{ role: 'user', content: 'hello' }];

function setup(answer: (req: LlmRequest, onDelta?: (d: string) => void) => Promise<LlmResult>) {
  const llm = { name: 'scripted', complete: vi.fn(answer) } satisfies LlmProvider;
  const log = { error: vi.fn(), warn: vi.fn(), info: vi.fn(), debug: vi.fn(), child: () => log };
  const usage = { recordModelCall: vi.fn() };
  const transport = createRouterTransport(
    (r) => r.service(LLMService, createLlmService({ llm, log: log as unknown as Logger, usage: usage as unknown as UsageStore, defaultTier: 'medium' })),
    { router: { interceptors: [serverAuthInterceptor(TOKEN)] }, transport: { interceptors: [clientAuthInterceptor(TOKEN)] } },
  );
  return { llm, log, usage, client: createClient(LLMService, transport) };
}

const ok = async (req: LlmRequest, onDelta?: (d: string) => void): Promise<LlmResult> => {
  onDelta?.('hel');
  onDelta?.('lo');
  return {
    text: `hello at ${req.tier}`,
    model: 'm-1',
    provider: 'p-1',
    finishReason: 'stop',
    usage: { inputTokens: 2, outputTokens: 3, totalTokens: 5, costUsd: 0.5 },
  };
};

describe('Complete', () => {
  it('answers through the provider at the default tier and records the call', async () => {
    const { client, usage } = setup(ok);
    const r = await client.complete({ messages: hello }, asSystem);
    expect(r).toMatchObject({ text: 'hello at medium', provider: 'p-1', finishReason: 'stop', cacheHit: false });
    expect(r.usage).toMatchObject({ promptTokens: 2, completionTokens: 3, totalTokens: 5, model: 'm-1', tier: ModelTier.MEDIUM });
    expect(usage.recordModelCall).toHaveBeenCalledWith(expect.objectContaining({ agentId: 'llm-service', model: 'm-1', tier: 'medium', totalTokens: 5 }));
  });

  it('refuses bad arguments with InvalidArgument naming the field, before any model call', async () => {
    const { client, llm } = setup(ok);
    for (const [req, message] of [
      [{ messages: [] }, 'messages is required'],
      [{ messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role must be one of: system, user, assistant, tool'],
      [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id is required for role tool'],
      [{ messages: hello, temperature: 3 }, 'temperature must be from 0 to 2'],
      [{ messages: hello, maxTokens: -1 }, 'max_tokens must be >= 0 (0: MAX_TOKENS)'],
      [{ messages: hello, toolChoice: 'auto' }, 'tool_choice needs tools'],
      [{ messages: hello, tools: [{ name: 'no spaces allowed' }] }, 'tools[0].name must be 1 to 64 letters, digits, _ or -'],
      [{ messages: hello, tier: 42 as ModelTier }, 'invalid tier: 42'],
    ] as [MessageInitShape<typeof CompleteRequestSchema>, string][]) {
      expect(await rpcFailure(client.complete(req, asSystem)), message).toEqual({ code: Code.InvalidArgument, message });
    }
    expect(llm.complete).not.toHaveBeenCalled();
  });

  it("keeps a provider failure's own code and message (Unavailable), without logging it as a bug", async () => {
    const { client, log } = setup(async () => {
      throw unavailable('every provider failed: p-1 rate limited');
    });
    expect(await rpcFailure(client.complete({ messages: hello }, asSystem))).toEqual({
      code: Code.Unavailable,
      message: 'every provider failed: p-1 rate limited',
    });
    expect(log.error).not.toHaveBeenCalled();
  });

  it('an unexpected failure is Internal, its message hidden and logged once', async () => {
    const { client, log } = setup(async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'secret-key-1234')");
    });
    expect(await rpcFailure(client.complete({ messages: hello }, asSystem))).toEqual({ code: Code.Internal, message: 'internal error' });
    expect(log.error).toHaveBeenCalledTimes(1);
  });

  it('refuses a call without an authenticated caller', async () => {
    const { client, llm } = setup(ok);
    expect((await rpcFailure(client.complete({ messages: hello }))).code).toBe(Code.Unauthenticated);
    expect(llm.complete).not.toHaveBeenCalled();
  });
});

describe('StreamComplete', () => {
  it('streams the deltas in order, then the whole answer', async () => {
    const { client } = setup(ok);
    const got: string[] = [];
    for await (const m of client.streamComplete({ messages: hello }, asSystem)) {
      got.push(m.event.case === 'delta' ? `delta:${m.event.value}` : `${m.event.case}:${m.event.case === 'done' ? m.event.value.text : ''}`);
    }
    expect(got).toEqual(['delta:hel', 'delta:lo', 'done:hello at medium']);
  });

  it('ends with the mapped error: a bad argument, or a hidden internal failure after the deltas', async () => {
    const bad = setup(ok);
    expect(
      await rpcFailure(
        (async () => {
          for await (const _ of bad.client.streamComplete({ messages: [] }, asSystem));
        })(),
      ),
    ).toEqual({ code: Code.InvalidArgument, message: 'messages is required' });

    const broken = setup(async (_req, onDelta) => {
      onDelta?.('par');
      throw new Error('socket hang up at 10.1.2.3');
    });
    const deltas: string[] = [];
    const r = await rpcFailure(
      (async () => {
        for await (const m of broken.client.streamComplete({ messages: hello }, asSystem)) if (m.event.case === 'delta') deltas.push(m.event.value);
      })(),
    );
    expect(deltas).toEqual(['par']);
    expect(r).toEqual({ code: Code.Internal, message: 'internal error' });
    expect(broken.log.error).toHaveBeenCalledTimes(1);
  });
});

describe('Embed, ListModels, CountTokens', () => {
  it('Embed and ListModels without the model catalogue are FailedPrecondition; Embed checks its texts first', async () => {
    const { client } = setup(ok);
    expect(await rpcFailure(client.embed({ texts: [] }, asSystem))).toEqual({ code: Code.InvalidArgument, message: 'texts is required' });
    expect(await rpcFailure(client.embed({ texts: ['a', ''] }, asSystem))).toEqual({ code: Code.InvalidArgument, message: 'texts[1] is empty' });
    expect(await rpcFailure(client.embed({ texts: ['a'] }, asSystem))).toEqual({
      code: Code.FailedPrecondition,
      message: 'Embed needs the model catalogue, which this process has not loaded',
    });
    expect((await rpcFailure(client.listModels({}, asSystem))).code).toBe(Code.FailedPrecondition);
    expect(await rpcFailure(client.listModels({ tier: 42 as ModelTier }, asSystem))).toEqual({ code: Code.InvalidArgument, message: 'invalid tier: 42' });
  });

  it('CountTokens estimates and says so', async () => {
    const { client } = setup(ok);
    const r = await client.countTokens({ messages: [{ role: 'user', content: 'abcdefgh' }], text: 'abcde' }, asSystem);
    expect(r).toEqual(expect.objectContaining({ tokenCount: 2 + 2, estimated: true, method: TOKEN_ESTIMATE_METHOD }));
    expect((await rpcFailure(client.countTokens({ text: 'x' }))).code).toBe(Code.Unauthenticated);
  });
});
