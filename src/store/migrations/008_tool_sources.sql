-- Tool sources users register (issue "Tools from anywhere"): MCP servers (kind mcp: url) and
-- OpenAPI documents (kind openapi: spec as registered, spec_url when it came from one, base_url).
-- headers_enc holds the request headers encrypted with AES-256-GCM like channel credentials
-- (CHANNEL_SECRET_KEY): 'v1:' + base64(iv | tag | ciphertext), bound to the row's id; only the
-- header names are kept in clear. tools is the last tool list the source gave (an MCP server's
-- tools/list), so every process can offer its tools without asking it first. Names are unique
-- per owner and kind; the anonymous owner (user_id NULL) counts as one owner. Idempotent.
CREATE TABLE IF NOT EXISTS tool_sources (
  id           uuid PRIMARY KEY,
  user_id      uuid,
  tenant_id    uuid,
  kind         text NOT NULL CHECK (kind IN ('mcp', 'openapi')),
  name         text NOT NULL,
  url          text,
  spec_url     text,
  base_url     text,
  spec         jsonb,
  headers_enc  text NOT NULL,
  header_names text[] NOT NULL DEFAULT '{}',
  tools        jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS tool_sources_owner_kind_name_idx
  ON tool_sources ((COALESCE(user_id, '00000000-0000-0000-0000-000000000000'::uuid)), kind, name);
