-- Sessions: addressed by UUID or by an external id unique per owner; soft-deleted.
CREATE TABLE IF NOT EXISTS sessions (
  id               uuid PRIMARY KEY,
  external_id      text,
  user_id          uuid,
  tenant_id        uuid,
  title            text NOT NULL DEFAULT '',
  context          jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  last_activity_at timestamptz NOT NULL DEFAULT now(),
  deleted_at       timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS sessions_owner_external_idx
  ON sessions (COALESCE(user_id, '00000000-0000-0000-0000-000000000000'::uuid), external_id)
  WHERE external_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS sessions_owner_activity_idx ON sessions (user_id, last_activity_at DESC);
