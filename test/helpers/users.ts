/** Users for ownership tests: one registered through the API, and a colleague of the same tenant. */
import { randomUUID } from 'node:crypto';
import { hashKey, newApiKey } from '../../src/auth/index.js';
import { createClient, ok } from '../../src/client/index.js';
import type { Sql } from '../../src/store/index.js';

export interface TestUser {
  /** The headers that authenticate as this user. */
  h: Record<string, string>;
  userId: string;
  tenantId: string;
}

/** A new user (and tenant) registered at `base`, with the API key it was given. */
export async function registerUser(base: string, emailPrefix = 'u'): Promise<TestUser> {
  const api = createClient({ baseUrl: base });
  const b = ok(await api.POST('/api/v1/auth/register', { body: { email: `${emailPrefix}-${randomUUID()}@example.com`, password: 'password123' } }));
  return { h: { 'X-API-Key': b.api_key }, userId: b.user.id, tenantId: b.user.tenant_id };
}

/** Another user of `u`'s tenant (written straight into the database: registration makes a new tenant), with an API key. */
export async function colleagueOf(sql: Sql, u: Pick<TestUser, 'tenantId'>): Promise<TestUser & { key: string }> {
  const id = randomUUID();
  const key = newApiKey();
  await sql`INSERT INTO users (id, tenant_id, email, password_hash) VALUES (${id}, ${u.tenantId}, ${`c-${randomUUID()}@example.com`}, 'x')`;
  await sql`INSERT INTO api_keys (id, user_id, tenant_id, name, prefix, key_hash)
    VALUES (${randomUUID()}, ${id}, ${u.tenantId}, 'k', ${key.slice(0, 11)}, ${hashKey(key)})`;
  return { h: { 'X-API-Key': key }, key, userId: id, tenantId: u.tenantId };
}
