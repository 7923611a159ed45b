/**
 * Where a plan review lives while its research task waits: the Review state in a KV bucket
 * (one key per workflow, written with compare-and-set on the entry's revision, so two
 * gateways cannot both advance one version), and the feedback lock in a second bucket whose
 * short TTL is the lock's lease (a gateway that dies holding it frees it within minutes).
 *
 * Each state carries its own expiry (review timeout + 5 minutes): past it, the state reads as
 * missing, whatever the bucket still holds (the bucket's max age only bounds a leak).
 */
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { BUCKETS, coreReplicas, kvKeys, openBucket, type Bus } from '../bus/index.js';
import type { ModelCall } from '../agents/index.js';

export interface ReviewTurn {
  role: 'assistant' | 'user';
  message: string;
  /** RFC 3339 */
  timestamp: string;
}

/** The Review state of the interface, plus what the service needs to keep (owner, expiry, usage). */
export interface StoredReview {
  status: 'reviewing' | 'approved';
  round: number;
  version: number;
  current_plan: string;
  rounds: ReviewTurn[];
  query: string;
  /** The last model answer's intent: `ready` (an actionable plan) or `feedback` (questions). */
  intent: 'ready' | 'feedback';
  task_id: string;
  user_id: string | null;
  tenant_id: string | null;
  timeout_seconds: number;
  /** After it, the review is gone (404). */
  expires_at: string;
  /** The review rounds' model calls (their usage goes into the task's). */
  calls: ModelCall[];
}

/** The longest review_timeout (seconds) a task may ask for. */
export const MAX_REVIEW_TIMEOUT_SECONDS = 86_400;
/** How long a review state outlives its timeout. */
export const REVIEW_GRACE_MS = 5 * 60 * 1000;
/** The bucket's max age: the longest review and its grace (entries past their expiry read as missing anyway). */
const REVIEW_BUCKET_TTL_MS = MAX_REVIEW_TIMEOUT_SECONDS * 1000 + REVIEW_GRACE_MS;
/** The feedback lock's lease: longer than any model call, short enough that a dead gateway's lock frees itself. */
const LOCK_TTL_MS = 5 * 60 * 1000;

const enc = new TextEncoder();
const dec = new TextDecoder();

const wrongRevision = (err: unknown) => err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamWrongLastSequence;

export class ReviewStore {
  private constructor(
    private readonly states: KV,
    private readonly locks: KV,
  ) {}

  static async open(bus: Bus): Promise<ReviewStore> {
    const replicas = await coreReplicas(bus.jsm);
    const [states, locks] = await Promise.all([
      openBucket(bus.nc, bus.jsm, BUCKETS.reviews, { ttlMs: REVIEW_BUCKET_TTL_MS, replicas }),
      openBucket(bus.nc, bus.jsm, BUCKETS.reviewLocks, { ttlMs: LOCK_TTL_MS, replicas }),
    ]);
    return new ReviewStore(states, locks);
  }

  /** The review of a workflow and its revision, or undefined when there is none or it expired. */
  async get(taskId: string, now = Date.now()): Promise<{ state: StoredReview; revision: number } | undefined> {
    const e = await this.states.get(kvKeys.review(taskId));
    if (!e || e.operation !== 'PUT' || !e.value.length) return undefined;
    const state = JSON.parse(dec.decode(e.value)) as StoredReview;
    if (Date.parse(state.expires_at) <= now) return undefined;
    return { state, revision: e.revision };
  }

  /** Stores a new review; one that exists (a replayed step) is kept as it is. */
  async create(state: StoredReview): Promise<void> {
    try {
      await this.states.create(kvKeys.review(state.task_id), enc.encode(JSON.stringify(state)));
    } catch (err) {
      if (!(await this.get(state.task_id))) throw err;
    }
  }

  /** Writes `state` if the stored review is still at `revision`; false when it changed meanwhile. */
  async update(state: StoredReview, revision: number): Promise<boolean> {
    try {
      await this.states.update(kvKeys.review(state.task_id), enc.encode(JSON.stringify(state)), revision);
      return true;
    } catch (err) {
      if (wrongRevision(err)) return false;
      throw err;
    }
  }

  /** Takes the feedback lock of a review: false while someone holds it. */
  async lock(taskId: string, holder: string): Promise<boolean> {
    try {
      await this.locks.create(kvKeys.review(taskId), enc.encode(holder));
      return true;
    } catch (err) {
      if (wrongRevision(err) || /wrong last sequence|key exists/i.test((err as Error).message)) return false;
      throw err;
    }
  }

  async locked(taskId: string): Promise<boolean> {
    const e = await this.locks.get(kvKeys.review(taskId));
    return !!e && e.operation === 'PUT' && e.value.length > 0;
  }

  /** Lets go of the lock if `holder` still holds it. */
  async unlock(taskId: string, holder: string): Promise<void> {
    const key = kvKeys.review(taskId);
    const e = await this.locks.get(key).catch(() => null);
    if (e && e.operation === 'PUT' && dec.decode(e.value) === holder) await this.locks.delete(key, { previousSeq: e.revision }).catch(() => {});
  }
}
