/**
 * The gateway's submissions as spans. Every way a client submits a task (REST and its stream
 * variant, MCP, catalogue agents, the OpenAI-compatible /v1) reaches the orchestrator through
 * the gateway's one Connect transport, so the span is made there, around SubmitTask: its
 * parent is the client's `traceparent` (which the routes put in options.traceparent), or
 * none (a new trace). What goes on to the orchestrator is the span's own context (options and
 * labels `traceparent`, label `trace_id`), which the orchestrator keeps with the task and every
 * start message of it carries to a worker (src/tracing, src/tasks startHeaders).
 */
import { clone, create, type MessageInitShape } from '@bufbuild/protobuf';
import type { Transport } from '@connectrpc/connect';
import { SpanKind, trace, type Tracer } from '@opentelemetry/api';
import { TaskMetadataSchema } from '../gen/svc/v1/common_pb.js';
import { OrchestratorService, SubmitOptionsSchema, SubmitTaskRequestSchema } from '../gen/svc/v1/orchestrator_pb.js';
import { carrierOf, contextOfCarrier, inSpan } from '../tracing/index.js';

type SubmitInit = MessageInitShape<typeof SubmitTaskRequestSchema>;

/** `inner` with a span around each SubmitTask; every other call passes through untouched. */
export function traceSubmissions(inner: Transport, tracer: Tracer): Transport {
  return {
    unary(method, signal, timeoutMs, header, input, contextValues) {
      if (method !== (OrchestratorService.method.submitTask as unknown)) return inner.unary(method, signal, timeoutMs, header, input, contextValues);
      const req = clone(SubmitTaskRequestSchema, create(SubmitTaskRequestSchema, input as SubmitInit));
      const metadata = (req.metadata ??= create(TaskMetadataSchema));
      const options = (req.options ??= create(SubmitOptionsSchema));
      const given = options.traceparent || metadata.labels.traceparent;
      const attributes = {
        'rpc.system': 'connect_rpc',
        'rpc.service': OrchestratorService.typeName,
        'rpc.method': method.name,
        ...(options.modeName ? { 'taskorch.task.mode': options.modeName } : {}),
      };
      const parent = contextOfCarrier(given ? { traceparent: given } : undefined);
      return inSpan(
        tracer,
        'task.submit',
        { kind: SpanKind.CLIENT, attributes },
        async (span) => {
          const carried = carrierOf(trace.setSpan(parent, span));
          // A no-op tracer without a client context has no valid span: the request goes on as it came.
          if (carried.traceparent) {
            options.traceparent = carried.traceparent;
            metadata.labels = { ...metadata.labels, traceparent: carried.traceparent, trace_id: span.spanContext().traceId };
          }
          const res = await inner.unary(method, signal, timeoutMs, header, req as unknown as typeof input, contextValues);
          span.setAttribute('taskorch.task.id', (res.message as { taskId?: string }).taskId ?? '');
          return res;
        },
        parent,
      );
    },
    stream: (method, signal, timeoutMs, header, input, contextValues) => inner.stream(method, signal, timeoutMs, header, input, contextValues),
  };
}
