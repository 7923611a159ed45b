/**
 * Accounts: registration (a tenant, its first user and a default API key, in one
 * transaction), login (scrypt; an unknown email costs the same time as a wrong password),
 * refresh-token rotation with reuse detection, and the caller's own profile.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { badRequest, conflict, notFound, unauthenticated, type Logger, type Principal } from '../kernel/index.js';
import type { Sql } from '../store/index.js';
import { hashKey, newApiKey } from './api-keys.js';
import { DEFAULT_SCRYPT, hashPassword, verifyPassword, type ScryptParams } from './passwords.js';
import type { TokenIssuer } from './tokens.js';
import { userJson, type UserRow } from './users.js';

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class Accounts {
  /** A hash of a random password, verified against when the email is unknown (same timing). */
  private dummyHash?: Promise<string>;

  constructor(
    private readonly sql: Sql,
    private readonly tokens: TokenIssuer,
    private readonly log: Logger,
    private readonly scrypt: ScryptParams = DEFAULT_SCRYPT,
  ) {}

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
    const passwordHash = await hashPassword(password, this.scrypt);
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
    const tokens = await this.tokens.issue(user);
    return { user: userJson(user, tenantName), api_key: apiKey, ...tokens };
  }

  async login(input: { email?: unknown; password?: unknown }) {
    const email = typeof input.email === 'string' ? input.email.trim() : '';
    const password = typeof input.password === 'string' ? input.password : '';
    if (!email || !password) throw badRequest('email and password are required');
    const [user] = await this.sql<UserRow[]>`SELECT * FROM users WHERE lower(email) = lower(${email})`;
    // Verify against a dummy hash when the user is unknown, so timing does not reveal it.
    this.dummyHash ??= hashPassword(randomBytes(16).toString('hex'), this.scrypt);
    const ok = await verifyPassword(password, user?.password_hash ?? (await this.dummyHash));
    if (!user || !ok || !user.is_active) throw unauthenticated('Invalid email or password');
    return { user: userJson(user), ...(await this.tokens.issue(user)) };
  }

  async refresh(input: { refresh_token?: unknown }) {
    const token = typeof input.refresh_token === 'string' ? input.refresh_token : '';
    if (!token) throw badRequest('refresh_token is required');
    const claims = await this.tokens.verify(token, 'refresh');
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
    const tokens = await this.tokens.issue(user, row.family_id, row.id);
    return tokens;
  }

  async me(p: Principal) {
    const [row] = await this.sql<(UserRow & { tenant_name: string })[]>`
      SELECT u.*, t.name AS tenant_name FROM users u JOIN tenants t ON t.id = u.tenant_id WHERE u.id = ${p.userId!}::uuid`;
    if (!row) throw notFound('user not found');
    return userJson(row, row.tenant_name);
  }
}
