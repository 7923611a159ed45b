-- Waits for people (plan review, approvals): one row per wait of a workflow. The decision is
-- written here first (once: the update is conditional on the wait being pending), then a wake
-- message re-activates the workflow. due_at is the wait's durable timer. Idempotent.
CREATE TABLE IF NOT EXISTS task_waits (
  id           text PRIMARY KEY,            -- the wait's public id (e.g. an approval_id)
  task_id      uuid NOT NULL,
  wait_key     text NOT NULL,               -- the workflow's name for the wait (its journal step)
  kind         text NOT NULL,               -- 'review' | 'approval' | ...
  status       text NOT NULL DEFAULT 'pending',  -- pending | decided
  user_id      uuid,
  tenant_id    uuid,
  session_id   text,
  request      jsonb NOT NULL DEFAULT '{}'::jsonb,  -- what the person is asked (kind-specific)
  decision     jsonb,
  decided_by   text,
  timed_out    boolean NOT NULL DEFAULT false,
  created_at   timestamptz NOT NULL DEFAULT now(),
  due_at       timestamptz NOT NULL,
  decided_at   timestamptz,
  consumed_at  timestamptz,                 -- the workflow journaled the decision
  woken_at     timestamptz,                 -- the last wake published for the decision
  UNIQUE (task_id, wait_key)
);
CREATE INDEX IF NOT EXISTS task_waits_due_idx ON task_waits (due_at) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS task_waits_unconsumed_idx ON task_waits (decided_at) WHERE status = 'decided' AND consumed_at IS NULL;
CREATE INDEX IF NOT EXISTS task_waits_pending_user_idx ON task_waits (user_id, created_at) WHERE status = 'pending';
