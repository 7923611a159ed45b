/**
 * Blobs: large binary tool outputs (screenshots over 500 KB) kept in a JetStream object store
 * (bucket BLOBS) so that a tool's output, its journal entry and the task's result carry a small
 * reference instead of megabytes of base64.
 *
 * - A blob's key is random (`b` + 32 hex digits): unguessable, and valid as an object name.
 * - Its owner (user id and tenant id; empty for the anonymous development principal) is kept in
 *   the object's metadata; `getOwned` hands the bytes only to that owner. Another caller, a
 *   malformed key and a missing (or expired) object all read as "no such blob".
 * - Retention: the bucket's max age (BLOB_TTL_MS, 7 days, the journal's retention, so a
 *   journaled result's reference outlives the step that recorded it); with `discard: new`, a
 *   store that reached its server limits refuses new blobs instead of dropping old ones.
 * - Objects are written once and never updated; several processes may open the bucket at once.
 */
import { randomBytes } from 'node:crypto';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { nanos } from '@nats-io/transport-node';
import { streamInfo } from './buckets.js';
import { BUCKETS } from './subjects.js';

/** How long a blob is kept (the BLOBS bucket's max age): a week. */
export const BLOB_TTL_MS = 7 * 24 * 3600 * 1000;

/** Who may read a blob: the principal whose tool call stored it. */
export interface BlobOwner {
  userId?: string;
  tenantId?: string;
}

export interface StoredBlob {
  key: string;
  contentType: string;
  sizeBytes: number;
}

export interface BlobContent {
  bytes: Uint8Array;
  contentType: string;
}

const KEY = /^b[0-9a-f]{32}$/;
/** A content type as stored: `type/subtype` with optional parameters; anything else is served as octets. */
const CONTENT_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(\s*;\s*[a-z0-9_-]+=[a-z0-9_.-]+)*$/i;

/** Whether a string can be a blob key (checked before any store lookup). */
export const isBlobKey = (key: string): boolean => KEY.test(key);

export class BlobStore {
  private constructor(private readonly os: ObjectStore) {}

  /**
   * Opens the BLOBS bucket, created when missing; an existing bucket's max age and replicas are
   * made what this process was configured with (Objm.create alone binds to it as it is).
   */
  static async open(js: JetStreamClient, jsm: JetStreamManager, o: { replicas: number; ttlMs?: number }): Promise<BlobStore> {
    const ttlMs = o.ttlMs ?? BLOB_TTL_MS;
    const stream = `OBJ_${BUCKETS.blobs}`;
    const info = await streamInfo(jsm, stream);
    if (info && (info.config.max_age !== nanos(ttlMs) || info.config.num_replicas !== o.replicas)) {
      await jsm.streams.update(stream, { ...info.config, max_age: nanos(ttlMs), num_replicas: o.replicas });
    }
    const os = await new Objm(js).create(BUCKETS.blobs, { ttl: nanos(ttlMs), replicas: o.replicas, description: 'large tool outputs (screenshots), by owner' });
    return new BlobStore(os);
  }

  /** Stores bytes for their owner; returns the new blob's key. */
  async put(bytes: Uint8Array, contentType: string, owner: BlobOwner): Promise<StoredBlob> {
    const key = `b${randomBytes(16).toString('hex')}`;
    const info = await this.os.putBlob(
      {
        name: key,
        metadata: {
          user_id: owner.userId ?? '',
          tenant_id: owner.tenantId ?? '',
          content_type: CONTENT_TYPE.test(contentType) ? contentType : 'application/octet-stream',
          created_at: new Date().toISOString(),
        },
      },
      bytes,
    );
    return { key, contentType, sizeBytes: info.size };
  }

  /**
   * The blob's bytes when `owner` stored it; undefined when the key is malformed, the blob is
   * missing or expired, or someone else owns it (the route cannot tell these apart, by design).
   */
  async getOwned(key: string, owner: BlobOwner): Promise<BlobContent | undefined> {
    if (!isBlobKey(key)) return undefined;
    const info = await this.os.info(key);
    if (!info || info.deleted) return undefined;
    const meta = info.metadata ?? {};
    if ((meta.user_id ?? '') !== (owner.userId ?? '')) return undefined;
    // A blob stored with a tenant is readable only within it; one stored without (a workflow
    // that did not know it) by its user alone.
    if (meta.tenant_id && meta.tenant_id !== (owner.tenantId ?? '')) return undefined;
    const bytes = await this.os.getBlob(key);
    if (!bytes) return undefined;
    const contentType = meta.content_type && CONTENT_TYPE.test(meta.content_type) ? meta.content_type : 'application/octet-stream';
    return { bytes, contentType };
  }
}
