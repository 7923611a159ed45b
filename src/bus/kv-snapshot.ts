/**
 * Every live entry of a KV bucket in one bounded pass: an ordered pull consumer over the
 * bucket's stream (last message per key), read up to the stream's last sequence at the start.
 * Writes arriving meanwhile neither stall nor prolong the pass (the next pass sees them). The
 * KV client's own listings (`keys()`, `history()`) use a push consumer that ends only when
 * nothing is pending: under a steady stream of writes one was seen to take 40 s.
 */
import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';

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

/**
 * The live entries of a KV bucket under `prefix` (keys `<prefix>.…`), in one pass: an
 * ephemeral consumer filtered to them (last message per key) says at creation how many there
 * are, and one fetch reads them. Two round trips whatever the count (listing the keys and
 * getting each would be one per key).
 */
export async function kvPrefixSnapshot(js: JetStreamClient, jsm: JetStreamManager, bucket: string, prefix: string): Promise<KvSnapshotEntry[]> {
  const stream = `KV_${bucket}`;
  const subjectPrefix = `$KV.${bucket}.`;
  const ci = await jsm.consumers.add(stream, {
    filter_subject: `${subjectPrefix}${prefix}.>`,
    deliver_policy: DeliverPolicy.LastPerSubject,
    ack_policy: AckPolicy.None,
    mem_storage: true,
    inactive_threshold: nanos(30_000),
  });
  const out: KvSnapshotEntry[] = [];
  try {
    let left = ci.num_pending;
    if (!left) return out;
    const consumer = await js.consumers.get(stream, ci.name);
    while (left > 0) {
      let got = 0;
      for await (const m of await consumer.fetch({ max_messages: Math.min(left, 1000), expires: 2000 })) {
        got++;
        left--;
        if (!m.headers?.get('KV-Operation') && m.data.length) out.push({ key: m.subject.slice(subjectPrefix.length), value: m.data, revision: m.seq });
        if (m.info.pending === 0) left = 0;
      }
      if (!got) break;
    }
    // Fewer entries than the consumer counted: a partial journal must never pass for a whole
    // one (recorded steps would run again). A timeout, so callers treat it as transient.
    if (left > 0) throw Object.assign(new Error(`KV ${bucket}: ${left} entries under ${prefix} not delivered in time`), { name: 'TimeoutError' });
  } finally {
    void jsm.consumers.delete(stream, ci.name).catch(() => undefined);
  }
  return out;
}
