/**
 * A bus (src/bus: one NATS connection with the topology ensured) on a test nats-server, for
 * tests that use the bus without the whole app. The topology's settings are test values
 * unless the test gives its own.
 */
import { connectBus, type Bus, type BusOptions } from '../../src/bus/index.js';
import { createLogger, type Logger } from '../../src/kernel/index.js';

/** The bus options of a test: one replica, 30 s ack wait, 5 deliveries, a day of events (10,000 a workflow) and of idempotency keys; `o` overrides. */
export function testBusOptions(url: string, name: string, o: Partial<BusOptions> = {}): BusOptions {
  return {
    url,
    name,
    replicas: 1,
    ackWaitMs: 30_000,
    maxDeliver: 5,
    eventsMaxAgeSeconds: 86_400,
    eventsMaxPerWorkflow: 10_000,
    idempotencyTtlSeconds: 86_400,
    ...o,
  };
}

/** connectBus with testBusOptions, logging nothing unless given a logger. */
export function connectTestBus(url: string, name: string, o: Partial<BusOptions> = {}, log: Logger = createLogger({ level: 'silent' })): Promise<Bus> {
  return connectBus(testBusOptions(url, name, o), log);
}
