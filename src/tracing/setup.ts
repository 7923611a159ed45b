/**
 * One tracer provider per process (startTracing, called by src/app at start; `shutdown` at
 * stop flushes what is still buffered). It exists only when spans go somewhere: to the OTLP
 * HTTP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, in batches) or to an exporter the caller hands
 * over (tests: an InMemorySpanExporter, span by span so they are readable at once). Otherwise
 * the tracer is the API's, a no-op unless something else registered a provider, nothing is
 * exported, and the SDK and the exporter are not even loaded.
 *
 * The provider is not registered globally: each process wiring (two apps share one test
 * process) passes its tracer to what makes spans. The context manager is the exception:
 * AsyncLocalStorage is per process by nature, so the first enabled setup registers it and
 * it stays (a later app of the same process uses it too).
 */
import { context, trace, type Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

/** The instrumentation scope of every span of the service. */
export const TRACER_NAME = 'taskorch';

/** The API's tracer: what a component uses when it was given none (a no-op unless a global provider is registered). */
export const globalTracer = (): Tracer => trace.getTracer(TRACER_NAME);

export interface TracingOptions {
  /** OTEL_SERVICE_NAME (service.name). */
  serviceName: string;
  /** INSTANCE_ID (service.instance.id): which process of the fleet made the span. */
  instanceId: string;
  version: string;
  /** The OTLP/HTTP traces URL (…/v1/traces); unset: no OTLP export. */
  endpoint?: string;
  /** Sent with every export (OTEL_EXPORTER_OTLP_HEADERS: an API key of the collector). */
  headers?: Record<string, string>;
  /** Spans go here instead of OTLP, each as it ends (tests). */
  exporter?: SpanExporter;
}

export interface Tracing {
  tracer: Tracer;
  /** Whether this process records and exports spans. */
  enabled: boolean;
  /** Exports what is buffered and stops the provider (a no-op when disabled). */
  shutdown(): Promise<void>;
}

export async function startTracing(o: TracingOptions): Promise<Tracing> {
  if (!o.exporter && !o.endpoint) return { tracer: globalTracer(), enabled: false, shutdown: async () => {} };
  const [sdk, { resourceFromAttributes }, { AsyncLocalStorageContextManager }] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/context-async-hooks'),
  ]);
  const processor = o.exporter
    ? new sdk.SimpleSpanProcessor(o.exporter)
    : new sdk.BatchSpanProcessor(
        new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({ url: o.endpoint, headers: o.headers ?? {} }),
      );
  // Context follows async calls (a model call's span finds its workflow's); refused quietly when one is registered already.
  const cm = new AsyncLocalStorageContextManager().enable();
  if (!context.setGlobalContextManager(cm)) cm.disable();
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': o.serviceName, 'service.instance.id': o.instanceId, 'service.version': o.version }),
    spanProcessors: [processor],
  });
  return { tracer: provider.getTracer(TRACER_NAME, o.version), enabled: true, shutdown: () => provider.shutdown() };
}
