/**
 * The W3C trace context across processes. A context travels as a carrier: the `traceparent`
 * (and `tracestate`) header values, written and read by the W3C propagator only. Carriers
 * go on HTTP/RPC requests and NATS message headers, and are stored with a task so that every
 * start message of it (the first, a wake after a wait, a re-publish) carries the same one.
 */
import { ROOT_CONTEXT, trace, type Context, type TextMapGetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** A context in its wire form: header name to value. */
export type TraceCarrier = Record<string, string>;

/** Headers as nats.js hands them over (MsgHdrs): a missing key reads as ''. */
export interface HeaderReader {
  get(k: string): string;
  keys(): string[];
}

const propagator = new W3CTraceContextPropagator();

const recordGetter: TextMapGetter<Partial<TraceCarrier>> = {
  keys: (c) => Object.keys(c),
  get: (c, k) => (Object.hasOwn(c, k) ? c[k] : undefined),
};

const headerGetter: TextMapGetter<HeaderReader> = {
  keys: (h) => h.keys(),
  get: (h, k) => h.get(k) || undefined,
};

/** The carrier of `ctx`'s span; empty when it has no valid one. */
export function carrierOf(ctx: Context): TraceCarrier {
  const out: TraceCarrier = {};
  propagator.inject(ctx, out, { set: (c, k, v) => (c[k] = v) });
  return out;
}

/** The context a carrier names (its span a remote parent), or the root context when it names none or is malformed. */
export function contextOfCarrier(carrier: Partial<TraceCarrier> | undefined): Context {
  return carrier ? propagator.extract(ROOT_CONTEXT, carrier, recordGetter) : ROOT_CONTEXT;
}

/** The context a message's headers carry, or the root context. */
export function contextOfHeaders(headers: HeaderReader | undefined): Context {
  return headers ? propagator.extract(ROOT_CONTEXT, headers, headerGetter) : ROOT_CONTEXT;
}

/**
 * A caller's `traceparent` checked and rewritten by the propagator, or undefined when it is
 * absent or not a valid W3C trace context (then nothing is carried on).
 */
export function traceCarrierOf(traceparent: string | undefined): TraceCarrier | undefined {
  if (!traceparent) return undefined;
  const ctx = contextOfCarrier({ traceparent });
  return trace.getSpanContext(ctx) ? carrierOf(ctx) : undefined;
}
