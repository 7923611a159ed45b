-- Messaging channels (platform_a, platform_b). Idempotent: safe to apply at every start-up.
-- credentials_enc holds the credentials encrypted with AES-256-GCM (src/channels/crypto.ts):
-- 'v1:' + base64(iv | tag | ciphertext), bound to the row's id; never the plaintext.
-- Names are unique per owner and type; the anonymous owner (user_id NULL, authentication off)
-- counts as one owner, hence the expression index rather than a plain UNIQUE constraint.
CREATE TABLE IF NOT EXISTS channels (
  id              uuid PRIMARY KEY,
  user_id         uuid,
  tenant_id       uuid,
  type            text NOT NULL CHECK (type IN ('platform_a', 'platform_b')),
  name            text NOT NULL,
  config          jsonb NOT NULL DEFAULT '{}'::jsonb,
  enabled         boolean NOT NULL DEFAULT true,
  credentials_enc text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS channels_owner_type_name_idx
  ON channels ((COALESCE(user_id, '00000000-0000-0000-0000-000000000000'::uuid)), type, name);
CREATE INDEX IF NOT EXISTS channels_owner_idx ON channels (user_id, created_at DESC);
