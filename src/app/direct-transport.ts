/**
 * The gateway's transport to the orchestrator when both roles run in one process: unary calls
 * go straight to the service implementation, with no serialisation and no sockets, through
 * the same interceptors as a call over the network (the client's: the internal token and the
 * caller's headers; then the server's: the token check and the caller's identity, read from
 * those headers into a fresh context, as a remote server would see it). Errors reach the
 * caller as the ConnectError the implementation threw (anything else as Internal), as over
 * the wire. Streaming calls go to `fallback` (Connect's in-memory router transport).
 *
 * Why: in one process (`ROLES=all`, the embedded default) the router transport serialised
 * every request and answer twice and built several AbortControllers and DOMExceptions per
 * call, about a fifth of a busy gateway's CPU (issue 18 §2).
 *
 * What differs from the wire: the implementation receives the caller's message object itself
 * and the caller receives the implementation's answer object itself (neither side mutates
 * them); the handler's context is aborted at the call's end with one shared reason instead of
 * a new DOMException. `invokeUnaryImplementation` and `createDeadlineSignal` are Connect's
 * protocol-level helpers (marked internal, outside semantic versioning):
 * direct-transport.test.ts fails if an update changes what this file relies on.
 */
import type { DescMessage, DescMethodStreaming, DescMethodUnary, DescService, MessageInitShape } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  type ConnectRouter,
  type ContextValues,
  type Interceptor,
  type MethodImplSpec,
  type ServiceImpl,
  type StreamResponse,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from '@connectrpc/connect';
import { createMethodImplSpec, createServiceImplSpec } from '@connectrpc/connect';
import { createDeadlineSignal, invokeUnaryImplementation } from '@connectrpc/connect/protocol';
import { create, isMessage } from '@bufbuild/protobuf';

type UnarySpec = Extract<MethodImplSpec, { kind: 'unary' }>;

/** The unary methods `routes` registers, by `<service type name>/<method name>`. */
function unarySpecsOf(routes: (r: ConnectRouter) => void): Map<string, UnarySpec> {
  const specs = new Map<string, UnarySpec>();
  const add = (s: MethodImplSpec) => {
    if (s.kind === 'unary') specs.set(`${s.method.parent.typeName}/${s.method.name}`, s);
  };
  const recorder: ConnectRouter = {
    handlers: [],
    service(service: DescService, impl: Partial<ServiceImpl<DescService>>) {
      for (const s of Object.values(createServiceImplSpec(service, impl).methods)) add(s);
      return recorder;
    },
    rpc(method, impl) {
      add(createMethodImplSpec(method, impl) as MethodImplSpec);
      return recorder;
    },
  } as ConnectRouter;
  routes(recorder);
  return specs;
}

/**
 * The signal a call runs under: aborted by the caller's signal or at the deadline (with
 * DeadlineExceeded, as Connect's transports do). Its own per call, so that the listeners the
 * call adds end with it, not on the caller's signal; `cleanup` removes the call's listener
 * from the caller's signal and stops the deadline.
 */
function callSignal(signal: AbortSignal | undefined, timeoutMs: number | undefined): { signal: AbortSignal; cleanup(): void } {
  const ac = new AbortController();
  const deadline = timeoutMs === undefined ? undefined : createDeadlineSignal(timeoutMs);
  const sources = [signal, deadline?.signal].filter((x): x is AbortSignal => x !== undefined);
  const onAbort = function (this: AbortSignal) {
    ac.abort(this.reason);
  };
  for (const s of sources) {
    if (s.aborted) {
      ac.abort(s.reason);
      break;
    }
    s.addEventListener('abort', onAbort, { once: true });
  }
  return {
    signal: ac.signal,
    cleanup() {
      for (const s of sources) s.removeEventListener('abort', onAbort);
      deadline?.cleanup();
    },
  };
}

/** Rejects with the signal's reason once it aborts: the caller stops waiting, as a transport's request would. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    else signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
}

/**
 * The reason a handler's context is aborted with when its call has ended (Connect's handlers
 * abort it then too); one object, not a DOMException with a stack per call.
 */
const CALL_ENDED = new ConnectError('the call has ended', Code.Canceled);

export function createDirectTransport(o: {
  routes: (r: ConnectRouter) => void;
  /** The client's interceptors (run first), then the server's, as over the network. */
  clientInterceptors: Interceptor[];
  serverInterceptors: Interceptor[];
  fallback: Transport;
}): Transport {
  const specs = unarySpecsOf(o.routes);
  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: Parameters<Transport['unary']>[3],
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const spec = specs.get(`${method.parent.typeName}/${method.name}`);
      if (!spec) return o.fallback.unary(method, signal, timeoutMs, header, input, contextValues);
      const message = isMessage(input, method.input) ? input : create(method.input, input);
      const call = callSignal(signal, timeoutMs);
      const url = `direct:/${method.parent.typeName}/${method.name}`;
      // The server's side: what a handler of the router would do with the request the client sent.
      const serve = async (req: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> => {
        const context = createHandlerContext({
          service: method.parent,
          method,
          protocolName: 'direct',
          requestMethod: 'POST',
          url,
          requestHeader: req.header,
          requestSignal: req.signal,
          timeoutMs,
          contextValues: createContextValues(),
        });
        try {
          // A call cancelled (or past its deadline) before it reached the server never runs.
          req.signal.throwIfAborted();
          const run = invokeUnaryImplementation(spec, context, req.message, o.serverInterceptors);
          const out = (await (signal || timeoutMs !== undefined ? Promise.race([run, untilAborted(req.signal)]) : run)) as UnaryResponse<I, O>['message'];
          return { stream: false, service: method.parent, method, header: context.responseHeader, trailer: context.responseTrailer, message: out };
        } finally {
          context.abort(CALL_ENDED);
        }
      };
      // The first interceptor is the outermost, as Connect applies them.
      const next = o.clientInterceptors.reduceRight<typeof serve>((n, i) => i(n as never) as never, serve);
      try {
        return await next({
          stream: false,
          service: method.parent,
          method,
          requestMethod: 'POST',
          url,
          header: new Headers(header),
          contextValues: contextValues ?? createContextValues(),
          signal: call.signal,
          message,
        });
      } catch (err) {
        // What a caller sees over the wire: the implementation's ConnectError, a cancellation or
        // deadline as such, anything else as Internal.
        if (call.signal.aborted && err === call.signal.reason) throw ConnectError.from(err, Code.Canceled);
        throw ConnectError.from(err, Code.Internal);
      } finally {
        call.cleanup();
      }
    },
    stream<I extends DescMessage, O extends DescMessage>(
      method: DescMethodStreaming<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: Parameters<Transport['unary']>[3],
      input: AsyncIterable<MessageInitShape<I>>,
      contextValues?: ContextValues,
    ): Promise<StreamResponse<I, O>> {
      return o.fallback.stream(method, signal, timeoutMs, header, input, contextValues);
    },
  };
}
