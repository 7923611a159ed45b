/**
 * Every live entry of a KV bucket in one bounded pass: an ordered pull consumer over the
 * bucket's stream (last message per key), read up to the stream's last sequence at the start.
 * Writes arriving meanwhile neither stall nor prolong the pass (the next pass sees them). The
 * KV client's own listings (`keys()`, `history()`) use a push consumer that ends only when
 * nothing is pending: under a steady stream of writes one was seen to take 40 s.
 */
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';

export interface KvSnapshotEntry {
  key: string;
  value: Uint8Array;
  /** The entry's revision (its stream sequence), for compare-and-set updates. */
  revision: number;
}

export async function kvSnapshot(js: JetStreamClient, jsm: JetStreamManager, bucket: string): Promise<KvSnapshotEntry[]> {
  const stream = `KV_${bucket}`;
  const { state } = await jsm.streams.info(stream);
  const out: KvSnapshotEntry[] = [];
  if (!state.messages) return out;
  const consumer = await js.consumers.get(stream, { deliver_policy: DeliverPolicy.LastPerSubject });
  const prefix = `$KV.${bucket}.`;
  try {
    let done = false;
    while (!done) {
      let got = 0;
      for await (const m of await consumer.fetch({ max_messages: 1000, expires: 1000 })) {
        got++;
        // A delete or purge marker, or newer than this pass: skipped.
        if (!m.headers?.get('KV-Operation') && m.data.length && m.seq <= state.last_seq) {
          out.push({ key: m.subject.slice(prefix.length), value: m.data, revision: m.seq });
        }
        if (m.seq >= state.last_seq || m.info.pending === 0) {
          done = true;
          break;
        }
      }
      if (!got) done = true;
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
  return out;
}
