/**
 * What an acknowledged write means on the NATS this process uses, in one line for the start-up
 * banner and the `ready` log: the server's version and, from what this process knows (the
 * embedded server's sync_interval, NATS_REPLICAS), when an ack survives a crash or a power loss.
 * deploy/README.md has the full table.
 */

export interface NatsDurabilityFacts {
  /** The connected server's version (its INFO), e.g. `2.10.27`. */
  version: string | undefined;
  /** Started by this process (NATS_URL unset). */
  embedded: boolean;
  /** The embedded server's sync_interval (`always`, a duration), undefined for the 2-minute default. */
  syncInterval?: string;
  /** NATS_REPLICAS. */
  replicas: number;
}

export function natsDurability(f: NatsDurabilityFacts): string {
  const version = `nats-server ${f.version ?? '(version unknown)'}`;
  if (f.replicas > 1) {
    return `${version}, R${f.replicas}: an ack means stored by a majority of ${f.replicas} servers (survives the loss of ${Math.floor((f.replicas - 1) / 2)}; fsync per each server's sync_interval)`;
  }
  if (!f.embedded) return `${version}, R1: an ack means written on one server (fsync per its sync_interval; see deploy/README.md)`;
  if (f.syncInterval === 'always') return `${version}, R1: an ack means fsynced to disk (sync_interval always)`;
  if (f.syncInterval) return `${version}, R1: an ack means written; fsync every ${f.syncInterval} (NATS_SYNC_INTERVAL)`;
  return `${version}, R1: an ack survives a crash of the server but not a power loss (fsync every 2 minutes; sync_interval needs nats-server 2.10)`;
}
