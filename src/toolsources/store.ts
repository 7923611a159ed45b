/**
 * Users' tool sources in PostgreSQL (table tool_sources): MCP servers and OpenAPI documents,
 * one owner each, names unique per owner and kind (409). Request headers are stored encrypted
 * (the channel credentials' AES-256-GCM key and format, bound to the row id), decrypted one
 * source at a time when its tools are made (`headersOf`: a row that cannot be decrypted fails
 * alone), and never part of a reply. Listings do not read the stored documents (up to
 * OPENAPI_MAX_SPEC_BYTES each): `specOf` reads one.
 */
import { randomUUID } from 'node:crypto';
import { decryptCredentials, encryptCredentials } from '../channels/index.js';
import { conflict } from '../kernel/index.js';
import type { Sql, postgres } from '../store/index.js';

export type SourceKind = 'mcp' | 'openapi';

/** Who a source belongs to; the anonymous owner (authentication off) is `userId: null`. */
export interface SourceOwner {
  userId: string | null;
  tenantId: string | null;
}

export interface StoredSource {
  id: string;
  owner: SourceOwner;
  kind: SourceKind;
  name: string;
  /** MCP: the server's URL. */
  url?: string;
  /** OpenAPI: where the document came from (absent when it was given inline) and the API's base URL. */
  specUrl?: string;
  baseUrl?: string;
  /** The headers, encrypted (`ToolSourceStore.headersOf` decrypts them). */
  headersEnc: string;
  headerNames: string[];
  /** OpenAPI: the document's `info` (title, version); the document itself is `specOf`. */
  info?: { title?: unknown; version?: unknown };
  /** The last tool list the source gave (an MCP server's tools/list). */
  tools: unknown[];
  createdAt: Date;
  updatedAt: Date;
}

export type NewSource = Pick<StoredSource, 'kind' | 'name' | 'url' | 'specUrl' | 'baseUrl' | 'tools'> & { spec?: unknown; headers: Record<string, string> };

/** Every column but the document (`spec`), whose `info` is enough for a listing. */
const COLUMNS = [
  'id',
  'user_id',
  'tenant_id',
  'kind',
  'name',
  'url',
  'spec_url',
  'base_url',
  'headers_enc',
  'header_names',
  'tools',
  'created_at',
  'updated_at',
];

type Row = Record<string, unknown>;
const isUniqueViolation = (err: unknown) => (err as { code?: string })?.code === '23505';
const date = (v: unknown) => (v instanceof Date ? v : new Date(String(v)));

export class ToolSourceStore {
  constructor(
    private readonly sql: Sql,
    private readonly key: Buffer,
  ) {}

  /** Adds a source; a name the owner already uses for this kind → 409. */
  async insert(owner: SourceOwner, s: NewSource): Promise<StoredSource> {
    const id = randomUUID();
    const enc = encryptCredentials(this.key, id, s.headers);
    const json = (v: unknown) => this.sql.json(v as postgres.JSONValue);
    try {
      const [r] = await this.sql`INSERT INTO tool_sources (id, user_id, tenant_id, kind, name, url, spec_url, base_url, spec, headers_enc, header_names, tools)
        VALUES (${id}, ${owner.userId}, ${owner.tenantId}, ${s.kind}, ${s.name}, ${s.url ?? null}, ${s.specUrl ?? null}, ${s.baseUrl ?? null},
          ${s.spec === undefined ? null : json(s.spec)}, ${enc}, ${Object.keys(s.headers)}, ${json(s.tools)}) RETURNING ${this.sql(COLUMNS)}, spec->'info' AS info`;
      return this.toSource(r!);
    } catch (err) {
      if (isUniqueViolation(err))
        throw conflict(`${s.kind === 'mcp' ? 'An MCP server' : 'An OpenAPI tool source'} named ${JSON.stringify(s.name)} already exists`);
      throw err;
    }
  }

  /** The owner's sources (of one kind), oldest first. */
  async list(owner: SourceOwner, kind?: SourceKind): Promise<StoredSource[]> {
    const cols = this.sql(COLUMNS);
    const rows = kind
      ? await this
          .sql`SELECT ${cols}, spec->'info' AS info FROM tool_sources WHERE user_id IS NOT DISTINCT FROM ${owner.userId}::uuid AND kind = ${kind} ORDER BY created_at, id`
      : await this.sql`SELECT ${cols}, spec->'info' AS info FROM tool_sources WHERE user_id IS NOT DISTINCT FROM ${owner.userId}::uuid ORDER BY created_at, id`;
    return rows.map((r) => this.toSource(r));
  }

  /** A source's headers, decrypted (throws when they cannot be: a changed CHANNEL_SECRET_KEY, a tampered row). */
  headersOf(s: Pick<StoredSource, 'id' | 'headersEnc'>): Record<string, string> {
    return decryptCredentials(this.key, s.id, s.headersEnc);
  }

  /** An OpenAPI source's document as registered. */
  async specOf(id: string): Promise<unknown> {
    const [r] = await this.sql`SELECT spec FROM tool_sources WHERE id = ${id}`;
    return r?.spec ?? undefined;
  }

  async count(owner: SourceOwner): Promise<number> {
    const [r] = await this.sql`SELECT count(*)::int AS n FROM tool_sources WHERE user_id IS NOT DISTINCT FROM ${owner.userId}::uuid`;
    return r!.n as number;
  }

  /** Removes the owner's source; its id, or undefined when the owner has none of that kind and name. */
  async remove(owner: SourceOwner, kind: SourceKind, name: string): Promise<string | undefined> {
    const [r] = await this
      .sql`DELETE FROM tool_sources WHERE user_id IS NOT DISTINCT FROM ${owner.userId}::uuid AND kind = ${kind} AND name = ${name} RETURNING id`;
    return r?.id as string | undefined;
  }

  /** Records a source's new tool list (an MCP server said its list changed). */
  async setTools(id: string, tools: unknown[]): Promise<void> {
    await this.sql`UPDATE tool_sources SET tools = ${this.sql.json(tools as postgres.JSONValue)}, updated_at = now() WHERE id = ${id}`;
  }

  private toSource(r: Row): StoredSource {
    return {
      id: r.id as string,
      owner: { userId: (r.user_id as string | null) ?? null, tenantId: (r.tenant_id as string | null) ?? null },
      kind: r.kind as SourceKind,
      name: r.name as string,
      ...(r.url ? { url: r.url as string } : {}),
      ...(r.spec_url ? { specUrl: r.spec_url as string } : {}),
      ...(r.base_url ? { baseUrl: r.base_url as string } : {}),
      ...(r.info && typeof r.info === 'object' ? { info: r.info as StoredSource['info'] } : {}),
      headersEnc: r.headers_enc as string,
      headerNames: (r.header_names as string[]) ?? [],
      tools: (r.tools as unknown[]) ?? [],
      createdAt: date(r.created_at),
      updatedAt: date(r.updated_at),
    };
  }
}
