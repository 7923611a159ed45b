/**
 * Traces (OpenTelemetry): the provider of a process and where its spans go (setup.ts), the W3C
 * context as it crosses processes (propagation.ts), and spans that end on every path (spans.ts).
 * The span points live with the code they measure: the gateway's submission, the worker's
 * workflow activation, the model router's calls, the tool registry's executions.
 */
export { globalTracer, startTracing, TRACER_NAME } from './setup.js';
export type { Tracing, TracingOptions } from './setup.js';
export { carrierOf, contextOfCarrier, contextOfHeaders, traceCarrierOf } from './propagation.js';
export type { HeaderReader, TraceCarrier } from './propagation.js';
export { failSpan, inSpan, markFailed } from './spans.js';
