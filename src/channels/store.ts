/**
 * Channels in PostgreSQL: the spec's channel object, owner-only (another owner's channel is
 * 403, an unknown one 404), names unique per owner and type (409). Credentials are validated
 * per type, stored encrypted and never part of a returned object.
 */
import { randomUUID } from 'node:crypto';
import { badRequest, conflict, forbidden, notFound } from '../kernel/index.js';
import type { Sql, postgres } from '../store/index.js';
import { decryptCredentials, encryptCredentials } from './crypto.js';

export const CHANNEL_TYPES = ['platform_a', 'platform_b'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** The credential fields each type requires (and the only ones it accepts). */
export const CREDENTIAL_FIELDS: Record<ChannelType, readonly string[]> = {
  platform_a: ['signing_secret', 'bot_token', 'app_id'],
  platform_b: ['channel_secret', 'channel_access_token'],
};

export interface Owner {
  userId: string | null;
  tenantId: string | null;
}

/** The spec's channel object: never the credentials. */
export interface Channel {
  id: string;
  user_id: string | null;
  type: ChannelType;
  name: string;
  config: Record<string, unknown>;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

/** A channel with its decrypted credentials: for webhook verification only, never a reply. */
export interface ChannelWithSecrets {
  channel: Channel;
  tenantId: string | null;
  credentials: Record<string, string>;
}

const MAX_NAME = 255;
const MAX_CREDENTIAL = 4096;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function checkType(v: unknown): ChannelType {
  if (v === undefined || v === null) throw badRequest('type is required');
  if (!(CHANNEL_TYPES as readonly unknown[]).includes(v)) throw badRequest(`type must be one of: ${CHANNEL_TYPES.join(', ')}`);
  return v as ChannelType;
}

function checkName(v: unknown): string {
  if (v === undefined || v === null) throw badRequest('name is required');
  if (typeof v !== 'string' || !v.trim()) throw badRequest('name must be a non-empty string');
  if (v.length > MAX_NAME) throw badRequest(`name must be at most ${MAX_NAME} characters`);
  return v.trim();
}

function checkConfig(v: unknown): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isObj(v)) throw badRequest('config must be a JSON object');
  if (v.agent_name !== undefined && v.agent_name !== null && typeof v.agent_name !== 'string') throw badRequest('config.agent_name must be a string');
  return v;
}

/** The credentials of a type: each required field a non-empty string, nothing else. Messages name fields, never values. */
export function checkCredentials(type: ChannelType, v: unknown): Record<string, string> {
  if (v === undefined || v === null) throw badRequest('credentials is required');
  if (!isObj(v)) throw badRequest('credentials must be a JSON object');
  const fields = CREDENTIAL_FIELDS[type];
  const unknown = Object.keys(v).find((k) => !fields.includes(k));
  if (unknown) throw badRequest(`credentials.${unknown} is not a ${type} credential (expected: ${fields.join(', ')})`);
  const out: Record<string, string> = {};
  for (const f of fields) {
    const x = v[f];
    if (typeof x !== 'string' || !x) throw badRequest(`credentials.${f} is required (a non-empty string)`);
    if (x.length > MAX_CREDENTIAL) throw badRequest(`credentials.${f} must be at most ${MAX_CREDENTIAL} characters`);
    out[f] = x;
  }
  return out;
}

function checkBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (!isObj(body)) throw badRequest('request body must be a JSON object');
  const unknown = Object.keys(body).find((k) => !allowed.includes(k));
  if (unknown) throw badRequest(`unknown field: ${unknown}`);
  return body;
}

type Row = Record<string, unknown>;
const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString());
const toChannel = (r: Row): Channel => ({
  id: r.id as string,
  user_id: (r.user_id as string | null) ?? null,
  type: r.type as ChannelType,
  name: r.name as string,
  config: (r.config as Record<string, unknown>) ?? {},
  enabled: r.enabled as boolean,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});
const isUniqueViolation = (err: unknown) => (err as { code?: string })?.code === '23505';
const duplicate = (type: string, name: string) => conflict(`A ${type} channel named ${JSON.stringify(name)} already exists`);

export class ChannelStore {
  constructor(
    private readonly sql: Sql,
    private readonly key: Buffer,
  ) {}

  async create(owner: Owner, body: unknown): Promise<Channel> {
    const b = checkBody(body, ['type', 'name', 'credentials', 'config']);
    const type = checkType(b.type);
    const name = checkName(b.name);
    const credentials = checkCredentials(type, b.credentials);
    const config = checkConfig(b.config);
    const id = randomUUID();
    const enc = encryptCredentials(this.key, id, credentials);
    try {
      const [r] = await this.sql`INSERT INTO channels (id, user_id, tenant_id, type, name, config, enabled, credentials_enc)
        VALUES (${id}, ${owner.userId}, ${owner.tenantId}, ${type}, ${name}, ${this.sql.json(config as postgres.JSONValue)}, true, ${enc}) RETURNING *`;
      return toChannel(r!);
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate(type, name);
      throw err;
    }
  }

  async list(owner: Owner): Promise<Channel[]> {
    const rows = await this.sql`SELECT * FROM channels WHERE user_id IS NOT DISTINCT FROM ${owner.userId}::uuid ORDER BY created_at DESC, id`;
    return rows.map(toChannel);
  }

  /** The caller's channel: 404 unknown, 403 another owner's. */
  async get(owner: Owner, id: string): Promise<Channel> {
    return toChannel(await this.ownRow(owner, id));
  }

  async update(owner: Owner, id: string, body: unknown): Promise<Channel> {
    const b = checkBody(body, ['name', 'credentials', 'config', 'enabled']);
    const cur = await this.ownRow(owner, id);
    const type = cur.type as ChannelType;
    const name = b.name !== undefined ? checkName(b.name) : (cur.name as string);
    const config = b.config !== undefined ? checkConfig(b.config) : (cur.config as Record<string, unknown>);
    if (b.enabled !== undefined && typeof b.enabled !== 'boolean') throw badRequest('enabled must be a boolean');
    const enabled = b.enabled !== undefined ? (b.enabled as boolean) : (cur.enabled as boolean);
    const enc = b.credentials !== undefined ? encryptCredentials(this.key, id, checkCredentials(type, b.credentials)) : (cur.credentials_enc as string);
    try {
      const [r] = await this.sql`UPDATE channels SET name = ${name}, config = ${this.sql.json(config as postgres.JSONValue)}, enabled = ${enabled},
        credentials_enc = ${enc}, updated_at = now() WHERE id = ${id} RETURNING *`;
      if (!r) throw notFound('Channel not found');
      return toChannel(r);
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate(type, name);
      throw err;
    }
  }

  async remove(owner: Owner, id: string): Promise<void> {
    await this.ownRow(owner, id);
    await this.sql`DELETE FROM channels WHERE id = ${id}`;
  }

  /** Any owner's channel with its credentials (the webhook: no caller, the signature decides). */
  async withSecrets(id: string): Promise<ChannelWithSecrets | undefined> {
    if (!UUID.test(id)) return undefined;
    const [r] = await this.sql`SELECT * FROM channels WHERE id = ${id}`;
    if (!r) return undefined;
    return {
      channel: toChannel(r),
      tenantId: (r.tenant_id as string | null) ?? null,
      credentials: decryptCredentials(this.key, id, r.credentials_enc as string),
    };
  }

  private async ownRow(owner: Owner, id: string): Promise<Row> {
    if (!UUID.test(id)) throw notFound('Channel not found');
    const [r] = await this.sql`SELECT * FROM channels WHERE id = ${id}`;
    if (!r) throw notFound('Channel not found');
    if ((r.user_id ?? null) !== owner.userId) throw forbidden('Forbidden: not the channel owner');
    return r;
  }
}
