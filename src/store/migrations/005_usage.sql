-- Usage records: every model call (llm/) and every tool execution (tools/). Idempotent.
CREATE TABLE IF NOT EXISTS llm_calls (
  id            text PRIMARY KEY,           -- <task id>:<journal step>: a replayed step writes once
  task_id       uuid,
  agent_id      text NOT NULL,
  model         text NOT NULL,
  provider      text NOT NULL,
  tier          text NOT NULL DEFAULT '',
  input_tokens  integer NOT NULL DEFAULT 0,
  output_tokens integer NOT NULL DEFAULT 0,
  total_tokens  integer NOT NULL DEFAULT 0,
  cost_usd      double precision NOT NULL DEFAULT 0,
  cache_hit     boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS llm_calls_task_idx ON llm_calls (task_id, created_at);

CREATE TABLE IF NOT EXISTS tool_calls (
  id                bigserial PRIMARY KEY,
  tool              text NOT NULL,
  task_id           uuid,
  session_id        text,
  user_id           uuid,
  success           boolean NOT NULL,
  execution_time_ms integer NOT NULL DEFAULT 0,
  cost_usd          double precision NOT NULL DEFAULT 0,
  tokens            integer NOT NULL DEFAULT 0,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS tool_calls_tool_idx ON tool_calls (tool, created_at DESC);
