/**
 * Running work in a span that ends however the work ends. A thrown error marks the span
 * failed (status ERROR, `error.type`, the exception recorded) and is thrown on unchanged.
 */
import { SpanStatusCode, context, type Context, type Span, type SpanOptions, type Tracer } from '@opentelemetry/api';

/** Marks a span failed without an exception (a failure reported as a result): `type` as `error.type`. */
export function markFailed(span: Span, type: string, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.setAttribute('error.type', type);
}

/** Marks a span failed by an exception, recorded: `type` (the error's kind) as `error.type`, else the error's name. */
export function failSpan(span: Span, err: unknown, type?: string): void {
  const e = err instanceof Error ? err : new Error(String(err));
  span.recordException(e);
  markFailed(span, type ?? e.name, e.message);
}

/** Runs `fn` with a new span active (child of `parent`, default the active context); the span ends when `fn` settles. */
export function inSpan<T>(tracer: Tracer, name: string, options: SpanOptions, fn: (span: Span) => Promise<T>, parent: Context = context.active()): Promise<T> {
  return tracer.startActiveSpan(name, options, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}
