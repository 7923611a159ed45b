/**
 * A barrier for "nothing more happened": a JetStream consumer with nothing left to deliver
 * and nothing delivered but unacknowledged has finished every message published before the
 * call, so whatever those messages would cause has been caused. Tests wait for this instead
 * of sleeping and hoping that a stray message has been acted on.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { waitFor } from './app.js';

export async function consumerDrained(natsUrl: string, stream: string, consumer: string, timeoutMs = 30_000): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(stream, consumer);
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      timeoutMs,
      50,
    );
  } finally {
    await nc.close();
  }
}
