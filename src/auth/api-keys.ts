/**
 * API keys: `sk_` + 32 random base64url characters; only their SHA-256 is stored; the key is
 * shown once, at creation. A verified key is remembered for API_KEY_CACHE_SECONDS, so a
 * revoked or expired key stops working at once in the process that revoked it and within
 * that time in every other gateway.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { AppError, Code, UUID_RE, badRequest, notFound, unauthenticated, type Principal } from '../kernel/index.js';
import type { Sql } from '../store/index.js';

const KEY_RE = /^sk_[A-Za-z0-9_-]{20,128}$/;

export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');
export const newApiKey = () => `sk_${randomBytes(24).toString('base64url')}`;

/** At most one last_used_at write per key per minute, off the request path. */
const LAST_USED_EVERY_MS = 60_000;

export class ApiKeys {
  /** Verified keys by hash; each entry lives until the cache time or the key's expiry, whichever is first. */
  private readonly verified = new LRUCache<string, Principal>({ max: 10_000 });
  /** Keys whose last_used_at was written within the last minute. */
  private readonly lastUsedWritten = new LRUCache<string, true>({ max: 10_000, ttl: LAST_USED_EVERY_MS });

  constructor(
    private readonly sql: Sql,
    private readonly cacheSeconds = 5,
  ) {}

  async create(p: Principal, input: { name?: unknown; expires_in_days?: unknown }) {
    const name = typeof input.name === 'string' && input.name.trim() ? input.name.trim() : '';
    if (!name) throw badRequest('name is required');
    if (name.length > 100) throw badRequest('name must be at most 100 characters');
    let expiresAt: Date | null = null;
    if (input.expires_in_days !== undefined && input.expires_in_days !== null) {
      const d = input.expires_in_days;
      if (typeof d !== 'number' || !Number.isInteger(d) || d < 1 || d > 3650) throw badRequest('expires_in_days must be an integer from 1 to 3650');
      expiresAt = new Date(Date.now() + d * 86400_000);
    }
    const [{ n }] = await this.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM api_keys WHERE user_id = ${p.userId!}::uuid AND revoked_at IS NULL`;
    if (n >= 100) throw new AppError(Code.ResourceExhausted, 'API key limit reached (100 active keys)');
    const key = newApiKey();
    const id = randomUUID();
    const [row] = await this.sql<{ created_at: Date }[]>`INSERT INTO api_keys (id, user_id, tenant_id, name, prefix, key_hash, expires_at)
      VALUES (${id}, ${p.userId!}, ${p.tenantId!}, ${name}, ${key.slice(0, 11)}, ${hashKey(key)}, ${expiresAt}) RETURNING created_at`;
    return { id, name, api_key: key, prefix: key.slice(0, 11), created_at: row.created_at.toISOString(), expires_at: expiresAt?.toISOString() ?? null };
  }

  async list(p: Principal) {
    const rows = await this.sql<
      {
        id: string;
        name: string;
        prefix: string;
        is_default: boolean;
        created_at: Date;
        last_used_at: Date | null;
        expires_at: Date | null;
        revoked_at: Date | null;
      }[]
    >`
      SELECT id, name, prefix, is_default, created_at, last_used_at, expires_at, revoked_at FROM api_keys
      WHERE user_id = ${p.userId!}::uuid AND revoked_at IS NULL ORDER BY created_at DESC`;
    const keys = rows.map((r) => ({
      id: r.id,
      name: r.name,
      prefix: r.prefix,
      is_default: r.is_default,
      created_at: r.created_at.toISOString(),
      last_used_at: r.last_used_at?.toISOString() ?? null,
      expires_at: r.expires_at?.toISOString() ?? null,
    }));
    return { api_keys: keys, count: keys.length };
  }

  async revoke(p: Principal, id: string) {
    if (!UUID_RE.test(id)) throw notFound('API key not found');
    const rows = await this.sql<{ key_hash: string }[]>`UPDATE api_keys SET revoked_at = now()
      WHERE id = ${id}::uuid AND user_id = ${p.userId!}::uuid AND revoked_at IS NULL RETURNING key_hash`;
    if (!rows.length) throw notFound('API key not found');
    this.verified.delete(rows[0].key_hash);
    return { message: 'API key revoked', id };
  }

  /** Revokes the user's default key and issues a new one. */
  async regenerateDefault(p: Principal) {
    const key = newApiKey();
    const id = randomUUID();
    const old = await this.sql.begin(async (tx) => {
      const revoked = await tx<{ key_hash: string }[]>`UPDATE api_keys SET revoked_at = now()
        WHERE user_id = ${p.userId!}::uuid AND is_default AND revoked_at IS NULL RETURNING key_hash`;
      await tx`INSERT INTO api_keys (id, user_id, tenant_id, name, prefix, key_hash, is_default)
        VALUES (${id}, ${p.userId!}, ${p.tenantId!}, 'default', ${key.slice(0, 11)}, ${hashKey(key)}, true)`;
      return revoked;
    });
    for (const r of old) this.verified.delete(r.key_hash);
    return { id, api_key: key, prefix: key.slice(0, 11), message: 'API key regenerated; the previous default key no longer works' };
  }

  /** The principal of a valid key; 401 `Invalid API key` otherwise. */
  async verify(key: string): Promise<Principal> {
    if (!KEY_RE.test(key)) throw unauthenticated('Invalid API key');
    const h = hashKey(key);
    const hit = this.verified.get(h);
    if (hit) return hit;
    const now = Date.now();
    const [row] = await this.sql<{ id: string; user_id: string; tenant_id: string; expires_at: Date | null; revoked_at: Date | null; is_active: boolean }[]>`
      SELECT k.id, k.user_id, k.tenant_id, k.expires_at, k.revoked_at, u.is_active FROM api_keys k JOIN users u ON u.id = k.user_id
      WHERE k.key_hash = ${h}`;
    if (!row || row.revoked_at || !row.is_active || (row.expires_at && row.expires_at.getTime() <= now)) {
      this.verified.delete(h);
      throw unauthenticated('Invalid API key');
    }
    const p: Principal = { userId: row.user_id, tenantId: row.tenant_id, key: `key:${row.id}`, anonymous: false };
    const ttl = Math.min(this.cacheSeconds * 1000, row.expires_at ? row.expires_at.getTime() - now : Infinity);
    // A ttl of 0 would mean "forever" to the cache: a key with no cache time is not remembered.
    if (ttl > 0) this.verified.set(h, p, { ttl });
    if (!this.lastUsedWritten.has(row.id)) {
      this.lastUsedWritten.set(row.id, true);
      void this.sql`UPDATE api_keys SET last_used_at = now() WHERE id = ${row.id}::uuid`.catch(() => {});
    }
    return p;
  }
}
