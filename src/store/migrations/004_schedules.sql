-- Cron schedules and their runs. Idempotent: safe to apply at every start-up.
-- A run is claimed by inserting its row: (schedule_id, triggered_at) is unique, so one due
-- time of one schedule can produce at most one run, whatever number of schedulers race.
CREATE TABLE IF NOT EXISTS schedules (
  id                     uuid PRIMARY KEY,
  user_id                uuid,
  tenant_id              uuid,
  name                   text NOT NULL,
  description            text NOT NULL DEFAULT '',
  cron_expression        text NOT NULL,
  timezone               text NOT NULL DEFAULT 'UTC',
  task_query             text NOT NULL,
  task_context           jsonb NOT NULL DEFAULT '{}'::jsonb,
  max_budget_per_run_usd double precision NOT NULL DEFAULT 10.0,
  timeout_seconds        integer NOT NULL DEFAULT 600,
  status                 text NOT NULL DEFAULT 'ACTIVE',
  next_run_at            timestamptz,
  last_run_at            timestamptz,
  total_runs             integer NOT NULL DEFAULT 0,
  successful_runs        integer NOT NULL DEFAULT 0,
  failed_runs            integer NOT NULL DEFAULT 0,
  paused_at              timestamptz,
  pause_reason           text NOT NULL DEFAULT '',
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS schedules_owner_idx ON schedules (user_id, created_at DESC);
CREATE INDEX IF NOT EXISTS schedules_due_idx ON schedules (next_run_at) WHERE status = 'ACTIVE';

CREATE TABLE IF NOT EXISTS schedule_runs (
  id             uuid PRIMARY KEY,
  schedule_id    uuid NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
  triggered_at   timestamptz NOT NULL,
  fired_at       timestamptz NOT NULL DEFAULT now(),
  fired_by       text NOT NULL DEFAULT '',
  workflow_id    uuid,
  query          text NOT NULL,
  status         text NOT NULL,
  result         text,
  error_message  text NOT NULL DEFAULT '',
  model_used     text NOT NULL DEFAULT '',
  provider       text NOT NULL DEFAULT '',
  total_tokens   integer NOT NULL DEFAULT 0,
  total_cost_usd double precision NOT NULL DEFAULT 0,
  duration_ms    bigint,
  started_at     timestamptz,
  completed_at   timestamptz,
  UNIQUE (schedule_id, triggered_at)
);
CREATE INDEX IF NOT EXISTS schedule_runs_schedule_idx ON schedule_runs (schedule_id, triggered_at DESC);
CREATE INDEX IF NOT EXISTS schedule_runs_open_idx ON schedule_runs (fired_at) WHERE status IN ('PENDING', 'RUNNING');
