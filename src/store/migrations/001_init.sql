-- Tasks, their archived events. Idempotent: safe to apply at every start-up.
CREATE TABLE IF NOT EXISTS tasks (
  id            uuid PRIMARY KEY,
  session_id    text NOT NULL,
  user_id       uuid,
  tenant_id     uuid,
  query         text NOT NULL,
  context       jsonb NOT NULL DEFAULT '{}'::jsonb,
  options       jsonb NOT NULL DEFAULT '{}'::jsonb,
  mode          text NOT NULL DEFAULT 'EXECUTION_MODE_SIMPLE',
  status        text NOT NULL,
  result        text,
  metadata      jsonb NOT NULL DEFAULT '{}'::jsonb,
  error         text NOT NULL DEFAULT '',
  model_used    text NOT NULL DEFAULT '',
  provider      text NOT NULL DEFAULT '',
  input_tokens  integer NOT NULL DEFAULT 0,
  output_tokens integer NOT NULL DEFAULT 0,
  total_tokens  integer NOT NULL DEFAULT 0,
  cost_usd      double precision NOT NULL DEFAULT 0,
  trace_id      text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  started_at    timestamptz,
  completed_at  timestamptz
);
CREATE INDEX IF NOT EXISTS tasks_created_idx ON tasks (created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS tasks_session_idx ON tasks (session_id, created_at DESC);
CREATE INDEX IF NOT EXISTS tasks_status_idx ON tasks (status, created_at DESC);
CREATE INDEX IF NOT EXISTS tasks_user_idx ON tasks (user_id, created_at DESC);

CREATE TABLE IF NOT EXISTS task_events (
  workflow_id uuid NOT NULL,
  seq         bigint NOT NULL,
  type        text NOT NULL,
  agent_id    text NOT NULL DEFAULT '',
  message     text NOT NULL DEFAULT '',
  payload     jsonb,
  ts          timestamptz NOT NULL,
  stream_id   text NOT NULL,
  PRIMARY KEY (workflow_id, seq)
);
