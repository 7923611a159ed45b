/**
 * Users, tenants, API keys and JWTs.
 *
 * - Passwords: scrypt (memory-hard), see passwords.ts.
 * - API keys: `sk_` + 32 random base64url characters; only their SHA-256 is stored; the key is
 *   shown once, at creation. Revoked or expired keys stop working at once in the process that
 *   revoked them and within API_KEY_CACHE_SECONDS (5 s) in every other gateway.
 * - JWTs (HS256, jose): short-lived access tokens and refresh tokens with rotation: each
 *   refresh revokes the token it used and issues a new one in the same family; presenting a
 *   revoked refresh token again revokes the whole family (token theft detection).
 *
 * AuthService is the gateway's Authenticator: `X-API-Key`, or `Authorization: Bearer` with an
 * API key or an access token (and the `api_key` query parameter on SSE only).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { AppError, Code, UUID_RE, badRequest, conflict, notFound, unauthenticated, type Logger, type Principal } from '../kernel/index.js';
import type { Sql } from '../store/index.js';
import { credentialOf, type AuthInput, type Authenticator } from './credentials.js';
import { DEFAULT_SCRYPT, hashPassword, verifyPassword, type ScryptParams } from './passwords.js';

export { createAuthenticator, credentialOf, type AuthInput, type Authenticator } from './credentials.js';

export interface AuthOptions {
  jwtSecret: string;
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
  apiKeyCacheSeconds?: number;
  scrypt?: ScryptParams;
}

export interface UserRow {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  password_hash: string;
  role: string;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_expires_in: number;
}

const ISSUER = 'taskorch';
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const KEY_RE = /^sk_[A-Za-z0-9_-]{20,128}$/;

export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');
export const newApiKey = () => `sk_${randomBytes(24).toString('base64url')}`;

export function userJson(u: UserRow, tenantName?: string) {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    tenant_id: u.tenant_id,
    ...(tenantName !== undefined ? { tenant_name: tenantName } : {}),
    is_active: u.is_active,
    created_at: u.created_at.toISOString(),
  };
}

export class AuthService implements Authenticator {
  private readonly secret: Uint8Array;
  private readonly keyCache = new Map<string, { p: Principal; until: number }>();
  private readonly lastUsedWritten = new Map<string, number>();
  /** A hash of a random password, verified against when the email is unknown (same timing). */
  private dummyHash?: Promise<string>;

  constructor(
    private readonly sql: Sql,
    private readonly opts: AuthOptions,
    private readonly log: Logger,
  ) {
    this.secret = new TextEncoder().encode(opts.jwtSecret);
  }

  // --- accounts ------------------------------------------------------------------------------

  async register(input: { email?: unknown; password?: unknown; name?: unknown; tenant_name?: unknown }) {
    const email = typeof input.email === 'string' ? input.email.trim() : '';
    const password = typeof input.password === 'string' ? input.password : '';
    if (!email) throw badRequest('email is required');
    if (!EMAIL_RE.test(email) || email.length > 254) throw badRequest('email is not a valid address');
    if (!password) throw badRequest('password is required');
    if (password.length < 8) throw badRequest('password must be at least 8 characters');
    if (password.length > 256) throw badRequest('password must be at most 256 characters');
    const name = typeof input.name === 'string' ? input.name.trim().slice(0, 200) : '';
    const tenantName = typeof input.tenant_name === 'string' && input.tenant_name.trim() ? input.tenant_name.trim().slice(0, 200) : `${email}'s workspace`;
    const passwordHash = await hashPassword(password, this.opts.scrypt ?? DEFAULT_SCRYPT);
    const tenantId = randomUUID();
    const userId = randomUUID();
    const apiKey = newApiKey();
    let user: UserRow;
    try {
      user = await this.sql.begin(async (tx) => {
        await tx`INSERT INTO tenants (id, name) VALUES (${tenantId}, ${tenantName})`;
        const [u] = await tx<UserRow[]>`INSERT INTO users (id, tenant_id, email, name, password_hash)
          VALUES (${userId}, ${tenantId}, ${email}, ${name}, ${passwordHash}) RETURNING *`;
        await tx`INSERT INTO api_keys (id, user_id, tenant_id, name, prefix, key_hash, is_default)
          VALUES (${randomUUID()}, ${userId}, ${tenantId}, 'default', ${apiKey.slice(0, 11)}, ${hashKey(apiKey)}, true)`;
        return u;
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw conflict('email already registered');
      throw err;
    }
    const tokens = await this.issueTokens(user);
    return { user: userJson(user, tenantName), api_key: apiKey, ...tokens };
  }

  async login(input: { email?: unknown; password?: unknown }) {
    const email = typeof input.email === 'string' ? input.email.trim() : '';
    const password = typeof input.password === 'string' ? input.password : '';
    if (!email || !password) throw badRequest('email and password are required');
    const [user] = await this.sql<UserRow[]>`SELECT * FROM users WHERE lower(email) = lower(${email})`;
    // Verify against a dummy hash when the user is unknown, so timing does not reveal it.
    this.dummyHash ??= hashPassword(randomBytes(16).toString('hex'), this.opts.scrypt ?? DEFAULT_SCRYPT);
    const ok = await verifyPassword(password, user?.password_hash ?? (await this.dummyHash));
    if (!user || !ok || !user.is_active) throw unauthenticated('Invalid email or password');
    return { user: userJson(user), ...(await this.issueTokens(user)) };
  }

  async refresh(input: { refresh_token?: unknown }) {
    const token = typeof input.refresh_token === 'string' ? input.refresh_token : '';
    if (!token) throw badRequest('refresh_token is required');
    const claims = await this.verifyJwt(token, 'refresh');
    const jti = claims.jti as string;
    const [row] = await this.sql<{ id: string; user_id: string; family_id: string; revoked_at: Date | null; expires_at: Date }[]>`
      SELECT id, user_id, family_id, revoked_at, expires_at FROM refresh_tokens WHERE id = ${jti}::uuid`;
    if (!row || row.expires_at < new Date()) throw unauthenticated('Invalid or expired token');
    if (row.revoked_at) {
      // A rotated token presented again: someone else may hold the family. Revoke it all.
      await this.sql`UPDATE refresh_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE family_id = ${row.family_id}::uuid`;
      this.log.warn({ user_id: row.user_id }, 'refresh token reuse detected; token family revoked');
      throw unauthenticated('Invalid or expired token');
    }
    const [user] = await this.sql<UserRow[]>`SELECT * FROM users WHERE id = ${row.user_id}::uuid`;
    if (!user || !user.is_active) throw unauthenticated('Invalid or expired token');
    const tokens = await this.issueTokens(user, row.family_id, row.id);
    return tokens;
  }

  async me(p: Principal) {
    const [row] = await this.sql<(UserRow & { tenant_name: string })[]>`
      SELECT u.*, t.name AS tenant_name FROM users u JOIN tenants t ON t.id = u.tenant_id WHERE u.id = ${p.userId!}::uuid`;
    if (!row) throw notFound('user not found');
    return userJson(row, row.tenant_name);
  }

  // --- API keys ------------------------------------------------------------------------------

  async createApiKey(p: Principal, input: { name?: unknown; expires_in_days?: unknown }) {
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

  async listApiKeys(p: Principal) {
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

  async revokeApiKey(p: Principal, id: string) {
    if (!UUID_RE.test(id)) throw notFound('API key not found');
    const rows = await this.sql<{ key_hash: string }[]>`UPDATE api_keys SET revoked_at = now()
      WHERE id = ${id}::uuid AND user_id = ${p.userId!}::uuid AND revoked_at IS NULL RETURNING key_hash`;
    if (!rows.length) throw notFound('API key not found');
    this.keyCache.delete(rows[0].key_hash);
    return { message: 'API key revoked', id };
  }

  /** Revokes the user's default key and issues a new one. */
  async regenerateDefaultKey(p: Principal) {
    const key = newApiKey();
    const id = randomUUID();
    const old = await this.sql.begin(async (tx) => {
      const revoked = await tx<{ key_hash: string }[]>`UPDATE api_keys SET revoked_at = now()
        WHERE user_id = ${p.userId!}::uuid AND is_default AND revoked_at IS NULL RETURNING key_hash`;
      await tx`INSERT INTO api_keys (id, user_id, tenant_id, name, prefix, key_hash, is_default)
        VALUES (${id}, ${p.userId!}, ${p.tenantId!}, 'default', ${key.slice(0, 11)}, ${hashKey(key)}, true)`;
      return revoked;
    });
    for (const r of old) this.keyCache.delete(r.key_hash);
    return { id, api_key: key, prefix: key.slice(0, 11), message: 'API key regenerated; the previous default key no longer works' };
  }

  // --- authentication ------------------------------------------------------------------------

  async authenticate(input: AuthInput): Promise<Principal> {
    const cred = credentialOf(input);
    if (!cred) throw unauthenticated();
    if (cred.startsWith('sk_')) return this.byApiKey(cred);
    const claims = await this.verifyJwt(cred, 'access');
    return { userId: claims.sub as string, tenantId: claims.tid as string, key: `user:${claims.sub}`, anonymous: false };
  }

  private async byApiKey(key: string): Promise<Principal> {
    if (!KEY_RE.test(key)) throw unauthenticated('Invalid API key');
    const h = hashKey(key);
    const now = Date.now();
    const hit = this.keyCache.get(h);
    if (hit && hit.until > now) return hit.p;
    const [row] = await this.sql<{ id: string; user_id: string; tenant_id: string; expires_at: Date | null; revoked_at: Date | null; is_active: boolean }[]>`
      SELECT k.id, k.user_id, k.tenant_id, k.expires_at, k.revoked_at, u.is_active FROM api_keys k JOIN users u ON u.id = k.user_id
      WHERE k.key_hash = ${h}`;
    if (!row || row.revoked_at || !row.is_active || (row.expires_at && row.expires_at.getTime() <= now)) {
      this.keyCache.delete(h);
      throw unauthenticated('Invalid API key');
    }
    const p: Principal = { userId: row.user_id, tenantId: row.tenant_id, key: `key:${row.id}`, anonymous: false };
    const ttl = (this.opts.apiKeyCacheSeconds ?? 5) * 1000;
    const until = Math.min(now + ttl, row.expires_at ? row.expires_at.getTime() : Infinity);
    this.keyCache.set(h, { p, until });
    if (this.keyCache.size > 10_000) this.keyCache.delete(this.keyCache.keys().next().value!);
    // last_used_at: at most one write per key per minute, off the request path.
    if ((this.lastUsedWritten.get(row.id) ?? 0) < now - 60_000) {
      this.lastUsedWritten.set(row.id, now);
      void this.sql`UPDATE api_keys SET last_used_at = now() WHERE id = ${row.id}::uuid`.catch(() => {});
    }
    return p;
  }

  private async issueTokens(user: UserRow, familyId: string = randomUUID(), replaces?: string): Promise<Tokens> {
    const now = Math.floor(Date.now() / 1000);
    const jti = randomUUID();
    const access = await new SignJWT({ tid: user.tenant_id, typ: 'access', email: user.email })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(user.id)
      .setIssuer(ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(now + this.opts.accessTtlSeconds)
      .setJti(randomUUID())
      .sign(this.secret);
    const refresh = await new SignJWT({ tid: user.tenant_id, typ: 'refresh', fam: familyId })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(user.id)
      .setIssuer(ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(now + this.opts.refreshTtlSeconds)
      .setJti(jti)
      .sign(this.secret);
    const expiresAt = new Date((now + this.opts.refreshTtlSeconds) * 1000);
    await this.sql.begin(async (tx) => {
      if (replaces) await tx`UPDATE refresh_tokens SET revoked_at = now(), replaced_by = ${jti}::uuid WHERE id = ${replaces}::uuid`;
      await tx`INSERT INTO refresh_tokens (id, user_id, family_id, expires_at) VALUES (${jti}, ${user.id}, ${familyId}, ${expiresAt})`;
    });
    return {
      access_token: access,
      refresh_token: refresh,
      token_type: 'Bearer',
      expires_in: this.opts.accessTtlSeconds,
      refresh_expires_in: this.opts.refreshTtlSeconds,
    };
  }

  private async verifyJwt(token: string, typ: 'access' | 'refresh') {
    try {
      const { payload } = await jwtVerify(token, this.secret, { issuer: ISSUER, algorithms: ['HS256'] });
      if (payload.typ !== typ || !payload.sub) throw unauthenticated('Invalid or expired token');
      return payload;
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (err instanceof joseErrors.JOSEError || err instanceof TypeError) throw unauthenticated('Invalid or expired token');
      throw err;
    }
  }
}
