/**
 * The process's metrics live in prom-client's default registry, which is process-global by
 * design: every app started in one process (tests start several) reports into it, and any
 * app's /metrics shows the whole process. Registration is idempotent so that a module
 * evaluated twice, or a second app, finds the metric the first one made instead of throwing.
 */
import { Counter, Gauge, Histogram, collectDefaultMetrics, register, type CounterConfiguration, type GaugeConfiguration } from 'prom-client';

/** A counter, created once per process under `name`. */
export function counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  return (register.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter<L>({ name, help, labelNames } as CounterConfiguration<L>);
}

/** A gauge, created once per process under `name`; `collect` runs at every scrape. */
export function gauge<L extends string>(name: string, help: string, labelNames: readonly L[] = [], collect?: GaugeConfiguration<L>['collect']): Gauge<L> {
  return (register.getSingleMetric(name) as Gauge<L> | undefined) ?? new Gauge<L>({ name, help, labelNames, collect });
}

/** A histogram, created once per process under `name`. */
export function histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> {
  return (register.getSingleMetric(name) as Histogram<L> | undefined) ?? new Histogram<L>({ name, help, labelNames, buckets });
}

/**
 * Node's process metrics (CPU, memory, file descriptors, GC, event-loop lag as
 * `nodejs_eventloop_lag_seconds`), under their conventional unprefixed names; started once.
 */
export function collectProcessMetrics(): void {
  if (!register.getSingleMetric('nodejs_eventloop_lag_seconds')) collectDefaultMetrics();
}

/** The registry in the Prometheus text exposition format, with its content type. */
export async function scrape(): Promise<{ contentType: string; text: string }> {
  return { contentType: register.contentType, text: await register.metrics() };
}
