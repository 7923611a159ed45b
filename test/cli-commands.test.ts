/**
 * The `taskorch` commands beyond submit/status/list/cancel, as a person runs them: a child
 * process (src/cli/main.ts) talking over HTTP to a running service with authentication on and
 * the offline model. review (a research plan shown, given feedback, a stale version refused,
 * approved), approve (pending listed, decided), agents (listed, shown, run from a test
 * catalogue), sessions, schedules (created, fired by the scheduler, runs listed, paused,
 * resumed, deleted), events and timeline of a finished task, --json output that parses, and
 * usage errors (exit 2) with --help texts.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CliError } from '../src/cli/errors.js';
import { run } from '../src/cli/run.js';
import { archivedEvents, json, runTask, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { CALC_AGENT } from './helpers/agents.js';
import { spawnCli, type CliRun } from './helpers/cli.js';
import { startResearchWeb } from './helpers/research-web.js';
import { taskApi } from './helpers/task-api.js';

const OFFLINE = '[offline provider: deterministic response, no language model was called]';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
let dir: string;
let apiKey: string;
let h: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cli-commands-'));
  writeFileSync(join(dir, 'calc.yaml'), CALC_AGENT);
  // A search backend and page for the research task under review.
  const web = await startResearchWeb();
  t = await startTestApp({
    ...web.env,
    GATEWAY_SKIP_AUTH: '0',
    PASSWORD_SCRYPT_N: '1024',
    // The scheduler fires the schedule a test makes due (this file's only app).
    ROLES: 'gateway,orchestrator,worker,archiver,scheduler',
    AGENT_CATALOG_DIR: dir,
    CALCULATOR_RATE_LIMIT: '0',
    APPROVAL_TIMEOUT_SECONDS: '600',
    RATE_LIMIT_REQUESTS: '100000',
    RATE_LIMIT_TASK_LIST_BURST: '100000',
    MAX_TOKENS_PER_REQUEST: '0',
    MAX_COST_PER_REQUEST: '0',
  });
  const r = await fetch(`${t.base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `cli-cmd-${randomUUID()}@example.com`, password: 'correct horse battery' }),
  });
  expect(r.status).toBe(201);
  apiKey = (await json(r)).api_key;
  h = { 'X-API-Key': apiKey };
}, 60_000);
afterAll(async () => {
  await t?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `taskorch <args>` as a child process against the test app, as the test user. */
function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  return spawnCli(args, { TASKORCH_URL: t.base, TASKORCH_API_KEY: apiKey, ...env }).done;
}

const { api, submit, statusOf, ended, pendingOf } = taskApi(() => ({ base: t.base, headers: h }));

describe('taskorch review', () => {
  it('shows the plan, sends feedback, refuses a stale version with a clear message, approves', { timeout: 60_000 }, async () => {
    const query = 'How does a fixed window rate limiter work?';
    const id = await submit({ query, context: { require_review: true, review_timeout: 600 } });
    await waitFor(async () => (await statusOf(id)) === 'TASK_STATUS_PAUSED' && (await api('GET', `/api/v1/tasks/${id}/review`)).status === 200, 30_000, 100);

    const [shown, asJson] = await Promise.all([cli(['review', id]), cli(['review', id, '--json'])]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^task\\s+${id}$`, 'm'));
    expect(shown.stdout).toMatch(/^status\s+reviewing$/m);
    expect(shown.stdout).toMatch(/^round\s+1 of 10$/m);
    expect(shown.stdout).toMatch(/^version\s+1$/m);
    // The offline planner gives no sub-questions: the plan is the question itself.
    expect(shown.stdout).toContain(`1. ${query}`);
    expect(shown.stderr).toContain(`approve: taskorch review ${id} --approve`);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ status: 'reviewing', round: 1, version: 1, query });

    const fb = await cli(['review', id, '--feedback', 'Cover sliding windows too']);
    expect(fb.code, fb.stderr).toBe(0);
    expect(fb.stderr).toContain('round 2 of 10, version 2: updated plan');
    expect(fb.stdout).toContain(OFFLINE);

    // Approving version 1 after the plan moved to version 2: refused (409), nothing approved.
    const stale = await cli(['review', id, '--approve', '--if-match', '1']);
    expect(stale.code).toBe(1);
    expect(stale.stdout).toBe('');
    expect(stale.stderr).toMatch(
      new RegExp(
        `^taskorch: review of task ${id}: Conflict: plan has been updated\\. .*\\(HTTP 409\\); the plan changed since version 1 was read: see the latest with taskorch review ${id}`,
        'm',
      ),
    );
    const history = await cli(['review', id, '--history']);
    expect(history.stdout).toMatch(/^version\s+2$/m);
    expect(history.stdout).toContain('[user ');
    expect(history.stdout).toContain('Cover sliding windows too');

    const ok = await cli(['review', id, '--approve']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toContain(`approved version 2; the research runs now: taskorch status ${id}`);
    expect((await api('GET', `/api/v1/tasks/${id}/review`)).body.status).toBe('approved');
    await waitFor(async () => (await statusOf(id)) !== 'TASK_STATUS_PAUSED', 20_000, 100);
    const again = await cli(['review', id, '--approve']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/the plan is already approved/);
  });
});

describe('taskorch approve', () => {
  it('lists pending approvals; --yes approves one (its task found in the list), --no --json refuses another', async () => {
    const [first, second] = await Promise.all([
      submit({ query: 'approve me first', mode: 'simple', context: { require_approval: true } }),
      submit({ query: 'refuse me', mode: 'simple', context: { require_approval: true } }),
    ]);
    const [a1, a2] = await Promise.all([pendingOf(first), pendingOf(second)]);

    const [listed, listedJson] = await Promise.all([cli(['approve']), cli(['approve', '--json'])]);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = listed.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^APPROVAL ID\s+TASK ID\s+REQUESTED\s+ACTION$/);
    expect(rows.find((l) => l.startsWith(a1.approval_id))).toMatch(new RegExp(`^${a1.approval_id}\\s+${first}\\s+\\S+ \\S+Z\\s+run task: approve me first`));
    expect(listed.stderr).toMatch(/^2 pending; decide with: taskorch approve <approval_id> --yes\|--no/m);
    expect(
      JSON.parse(listedJson.stdout)
        .approvals.map((a: { approval_id: string }) => a.approval_id)
        .sort(),
    ).toEqual([a1.approval_id, a2.approval_id].sort());

    const [yes, no] = await Promise.all([
      cli(['approve', a1.approval_id, '--yes', '--feedback', 'fine by me']),
      cli(['approve', a2.approval_id, '--no', '--feedback', 'not today', '--task', second, '--json']),
    ]);
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stdout).toBe(`approved: approval ${a1.approval_id} (task ${first})\n`);
    expect(no.code, no.stderr).toBe(0);
    expect(JSON.parse(no.stdout)).toEqual({ success: true, approval_id: a2.approval_id, workflow_id: second, status: 'rejected' });
    expect(await ended(first)).toBe('TASK_STATUS_COMPLETED');
    expect(await ended(second)).toBe('TASK_STATUS_FAILED');

    // Decided: no longer pending.
    const twice = await cli(['approve', a1.approval_id, '--yes']);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(new RegExp(`^taskorch: approval ${a1.approval_id} is not pending`));
  });

  it('cancel --json prints the gateway answer of a task waiting for approval', async () => {
    const id = await submit({ query: 'cancel me while I wait', mode: 'simple', context: { require_approval: true } });
    await pendingOf(id);
    const c = await cli(['cancel', id, '--reason', 'not needed', '--json']);
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout)).toMatchObject({ success: true });
    expect(await ended(id)).toBe('TASK_STATUS_CANCELLED');
  });
});

describe('taskorch agents', () => {
  it('lists the catalogue, shows an agent, runs one and prints its output; --json is one JSON object per line', { timeout: 45_000 }, async () => {
    const inputFile = join(dir, 'input.json');
    writeFileSync(inputFile, '{"expression": "6*7"}');
    const [listed, shown, ran, ranJson, fromFile, invalid] = await Promise.all([
      cli(['agents']),
      cli(['agents', 'show', 'calc']),
      cli(['agents', 'run', 'calc', '--input', '{"expression": "2^10"}']),
      cli(['agents', 'run', 'calc', '--input', '{"expression": "1+2"}', '--json']),
      cli(['agents', 'run', 'calc', '--input-file', inputFile, '--no-stream']),
      cli(['agents', 'run', 'calc', '--input', '{"expr": "1"}']),
    ]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^AGENT ID\s+CATEGORY\s+COST\s+NAME\ncalc\s+math\s+\$0\.00\s+Calculator\n$/);

    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^tool\s+calculator$/m);
    expect(shown.stdout).toContain('  expression  string  required; The expression\n');

    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ result: '1024' });
    expect(ran.stderr).toMatch(/^agent calc: task [0-9a-f-]{36} \(session [^)]+\)$/m);
    expect(ran.stderr.trim().split('\n').at(-1)).toMatch(/^✓ completed · task [0-9a-f-]{36}/);

    expect(ranJson.code, ranJson.stderr).toBe(0);
    const lines = ranJson.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((e) => e.type)).toContain('TOOL_INVOKED');
    expect(lines.at(-1)).toMatchObject({ status: 'TASK_STATUS_COMPLETED', response: { result: '3' } });

    expect(fromFile.code, fromFile.stderr).toBe(0);
    const id = fromFile.stdout.trim();
    expect(id).toMatch(UUID);
    expect(await ended(id)).toBe('TASK_STATUS_COMPLETED');
    expect(JSON.parse((await api('GET', `/api/v1/tasks/${id}`)).body.result)).toMatchObject({ result: '42' });

    // The gateway's validation message, exit 1.
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^taskorch: run agent calc: input validation failed: .*expr.*\(HTTP 400\)$/m);
  });
});

describe('taskorch sessions', () => {
  it('lists sessions and shows one turn by turn', async () => {
    const name = `cli-session-${randomUUID().slice(0, 8)}`;
    await runTask(t.base, h, { query: 'first turn question', session_id: name });
    await runTask(t.base, h, { query: 'second turn question', session_id: name });
    const [listed, shown, shownJson, limited] = await Promise.all([
      cli(['sessions', '--limit', '100']),
      cli(['sessions', name]),
      cli(['sessions', name, '--json']),
      cli(['sessions', name, '--limit', '1']),
    ]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(/^SESSION ID\s+TASKS\s+TOKENS\s+LAST ACTIVE\s+TITLE$/);
    expect(listed.stdout).toMatch(new RegExp(`^${name}\\s+2\\s+\\d+\\s+`, 'm'));

    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^session\\s+${name}$`, 'm'));
    expect(shown.stdout).toMatch(/^tasks\s+2 \(2 completed, 0 failed\)$/m);
    expect(shown.stdout).toMatch(/── turn 1 · completed · .* · task [0-9a-f-]{36}\n> first turn question\n\[offline provider/);
    expect(shown.stdout).toMatch(/── turn 2 · completed · .*\n> second turn question\n/);

    const j = JSON.parse(shownJson.stdout);
    expect(j.session).toMatchObject({ session_id: name, task_count: 2 });
    expect(j.history.tasks.map((x: { query: string }) => x.query)).toEqual(['first turn question', 'second turn question']);

    expect(limited.stdout).not.toContain('turn 1 ·');
    expect(limited.stdout).toContain('── turn 2 ·');
    expect(limited.stderr).toContain('turns 1-1 left out');
  });
});

describe('taskorch schedules', () => {
  it('creates a schedule, lists it, lists the run the scheduler fired, pauses, resumes and deletes it', { timeout: 60_000 }, async () => {
    const query = `scheduled digest ${randomUUID().slice(0, 8)}`;
    // A yearly cron: nothing fires on its own while the test runs.
    const made = await cli(['schedules', 'create', '--cron', '0 0 1 1 *', '--query', query, '--context', '{"source": "cli"}', '--budget', '2.5']);
    expect(made.code, made.stderr).toBe(0);
    const id = made.stdout.trim();
    expect(id).toMatch(UUID);
    expect(made.stderr).toMatch(/^Schedule created successfully; next run \d{4}-01-01 00:00:00Z$/m);

    const [listed, shown] = await Promise.all([cli(['schedules']), cli(['schedules', id, '--json'])]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+active\\s+0 0 1 1 \\*\\s+\\S+ \\S+Z\\s+0 \\(0 ok, 0 failed\\)\\s+${query}$`, 'm'));
    expect(JSON.parse(shown.stdout)).toMatchObject({ id, task_query: query, task_context: { source: 'cli' }, max_budget_per_run_usd: 2.5, status: 'ACTIVE' });

    // Made due in SQL: the scheduler fires it once.
    await t.app.store.sql`UPDATE schedules SET next_run_at = date_trunc('milliseconds', now() - interval '1 minute') WHERE id = ${id}`;
    const run = await waitFor(
      async () => {
        const r = (await api('GET', `/api/v1/schedules/${id}/runs`)).body.runs as { status: string; workflow_id: string }[];
        return r.length && !['PENDING', 'RUNNING'].includes(r[0].status) ? r[0] : undefined;
      },
      30_000,
      200,
    );
    expect(run.status).toBe('COMPLETED');

    const [runs, runsJson] = await Promise.all([cli(['schedules', 'runs', id]), cli(['schedules', 'runs', id, '--json'])]);
    expect(runs.code, runs.stderr).toBe(0);
    const rows = runs.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^TRIGGERED\s+STATUS\s+TASK ID\s+TOKENS\s+COST\s+DURATION\s+RESULT$/);
    expect(rows[1]).toMatch(new RegExp(`^\\S+ \\S+Z\\s+completed\\s+${run.workflow_id}\\s+\\d+\\s+\\$0\\.0000\\s+\\d+(\\.\\d)? m?s\\s+\\[offline provider`));
    expect(runs.stderr).toBe('1-1 of 1\n');
    expect(JSON.parse(runsJson.stdout)).toMatchObject({ total_count: 1, page: 1, runs: [{ workflow_id: run.workflow_id, status: 'COMPLETED' }] });

    const paused = await cli(['schedules', 'pause', id, '--reason', 'holiday']);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(new RegExp(`^paused schedule ${id} at \\S+ \\S+Z\\n$`));
    const [again, pausedList] = await Promise.all([cli(['schedules', 'pause', id]), cli(['schedules', '--status', 'paused', '--json'])]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`taskorch: pause schedule ${id}: Schedule is already paused (HTTP 409)\n`);
    expect(JSON.parse(pausedList.stdout).schedules.map((s: { id: string }) => s.id)).toContain(id);

    const resumed = await cli(['schedules', 'resume', id, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ message: 'Schedule resumed successfully' });

    const deleted = await cli(['schedules', 'delete', id]);
    expect(deleted.stdout).toBe(`deleted schedule ${id}\n`);
    const gone = await cli(['schedules', 'show', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/Schedule not found \(HTTP 404\)/);
  });
});

describe('taskorch events and timeline', () => {
  it('prints the stored events of a finished task (pages, --after, --type, --json) and its timeline', { timeout: 45_000 }, async () => {
    const sub = await cli(['submit', '--no-stream', '--json', '--mode', 'simple', 'What is a timeline?']);
    expect(sub.code, sub.stderr).toBe(0);
    const id = JSON.parse(sub.stdout).task_id;
    expect(id).toMatch(UUID);
    expect(await ended(id)).toBe('TASK_STATUS_COMPLETED');
    const stored = await archivedEvents(t.base, id, 30_000, h);

    const [all, some, typed, asJson, timeline, timelineJson] = await Promise.all([
      cli(['events', id]),
      cli(['events', id, '--after', '2', '--limit', '2']),
      cli(['events', id, '--type', 'workflow_started,stream_end']),
      cli(['events', id, '--json']),
      cli(['timeline', id]),
      cli(['timeline', id, '--json']),
    ]);
    expect(all.code, all.stderr).toBe(0);
    const rows = all.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^SEQ\s+TIME\s+TYPE\s+AGENT\s+MESSAGE$/);
    expect(rows).toHaveLength(stored.length + 1);
    expect(rows[1]).toMatch(/^1\s+\d\d:\d\d:\d\d\.\d{3}\s+WORKFLOW_STARTED\s/);
    expect(rows.at(-1)).toMatch(new RegExp(`^${stored.length}\\s+\\S+\\s+STREAM_END\\b`));

    expect(
      some.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => Number(l.split(/\s+/)[0])),
    ).toEqual([3, 4]);
    expect(some.stderr).toBe(`more may follow: taskorch events ${id} --after 4\n`);
    expect(
      typed.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(/\s+/)[2]),
    ).toEqual(['WORKFLOW_STARTED', 'STREAM_END']);
    const j = JSON.parse(asJson.stdout);
    expect(j).toMatchObject({ workflow_id: id, count: stored.length });
    expect(j.events.map((e: { seq: number }) => e.seq)).toEqual(stored.map((e) => e.seq));

    expect(timeline.code, timeline.stderr).toBe(0);
    expect(timeline.stdout).toMatch(new RegExp(`^task\\s+${id}$`, 'm'));
    expect(timeline.stdout).toMatch(/^status\s+completed$/m);
    expect(timeline.stdout).toMatch(/^duration\s+\d+(\.\d)? m?s$/m);
    expect(timeline.stdout).toMatch(/^#\s+STEP\s+AGENT\s+STATUS\s+START\s+DURATION\s+RETRIES\s+EVENTS$/m);
    const tj = JSON.parse(timelineJson.stdout);
    expect(tj).toMatchObject({ task_id: id, status: 'TASK_STATUS_COMPLETED' });
    expect(tj.steps.length).toBeGreaterThan(0);
    expect(
      timeline.stdout
        .split('\n')
        .find((l) => l.startsWith('1 '))
        ?.split(/\s+/)[1],
    ).toBe(tj.steps[0].name);
    expect(timeline.stderr).toBe(`${tj.stats.steps} steps, ${tj.stats.events} events, ${tj.stats.retries} retries\n`);
  });
});

describe('usage', () => {
  /** `run` in this process: a usage error throws CliError with exit code 2 before any request. */
  async function usage(args: string[]): Promise<string> {
    const e = await run(args).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e, args.join(' ')).toBeInstanceOf(CliError);
    expect((e as CliError).exitCode, `${args.join(' ')}: ${(e as Error).message}`).toBe(2);
    return (e as CliError).message;
  }

  it('unknown subcommands and bad arguments exit 2 with a message naming the problem', async () => {
    const id = '6a53aab4-072d-4f6a-937a-1c9b3b9cecbf';
    const cases: [string[], RegExp][] = [
      [['review'], /review needs exactly one task id/],
      [['review', id, '--feedback', 'x', '--approve'], /--feedback or --approve, not both/],
      [['review', id, '--feedback', ' '], /--feedback needs a text/],
      [['review', id, '--feedback', 'x'.repeat(10 * 1024 + 1)], /at most 10 KB/],
      [['review', id, '--if-match', '2'], /--if-match goes with --feedback or --approve/],
      [['review', id, '--approve', '--if-match', 'latest'], /--if-match expects a whole number/],
      [['approve', id], /needs one of --yes \(approve\) or --no \(refuse\)/],
      [['approve', id, '--yes', '--no'], /needs one of --yes/],
      [['approve', '--yes'], /needs the approval/],
      [['approve', id, id, '--yes'], /one approval at a time/],
      [['approve', id, '--yes', '--limit', '3'], /approve <approval_id> does not take --limit/],
      [['approve', id, '--no', '--modified-action', '{}'], /--modified-action goes with --yes/],
      [['approve', '--limit', 'many'], /--limit expects a whole number/],
      [['agents', 'frobnicate'], /unknown subcommand "frobnicate" of agents; subcommands: run, show/],
      [['agents', 'run'], /agents run needs exactly one agent id/],
      [['agents', 'run', 'calc', '--input', 'not json'], /--input is not valid JSON/],
      [['agents', 'run', 'calc', '--input', '[1]'], /--input must be a JSON object/],
      [['agents', 'run', 'calc', '--input', '{}', '--input-file', 'x.json'], /--input or --input-file, not both/],
      [['agents', 'run', 'calc', '--input-file', join(dir, 'no-such-file.json')], /cannot read --input-file/],
      [['agents', '--input', '{}'], /agents \(list\) does not take --input/],
      [['sessions', 'a', 'b'], /at most one session id/],
      [['sessions', 'a', '--offset', '1'], /does not take --offset/],
      [['schedules', 'frobnicate'], /unknown subcommand "frobnicate" of schedules; subcommands: create, show, pause, resume, runs, delete/],
      [['schedules', 'create', '--query', 'q'], /needs --cron and --query/],
      [['schedules', 'create', '--cron', '0 9 * * *', '--query', 'q', '--budget', 'free'], /--budget expects a positive number/],
      [['schedules', 'create', '--cron', '0 9 * * *', '--query', 'q', '--context', '"x"'], /--context must be a JSON object/],
      [['schedules', 'pause'], /schedules pause needs exactly one schedule id/],
      [['schedules', 'runs', id, '--reason', 'x'], /schedules runs does not take --reason/],
      [['schedules', '--status', 'sleeping'], /--status is active or paused/],
      [['schedules', 'runs', id, '--page', '0'], /start at 1/],
      [['events'], /events needs exactly one task id/],
      [['events', id, '--limit', '0'], /--limit must be at least 1/],
      [['events', id, '--bogus'], /Unknown option '--bogus'[\s\S]*See: taskorch events --help/],
      [['timeline', id, id], /timeline needs exactly one task id/],
    ];
    for (const [args, msg] of cases) expect(await usage(args), args.join(' ')).toMatch(msg);
  });

  it('every command has --help, and the usage names it', async () => {
    let printed = '';
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((printed += String(s)), true));
    try {
      const commands = ['review', 'approve', 'agents', 'sessions', 'schedules', 'events', 'timeline'];
      for (const c of commands) {
        printed = '';
        expect(await run([c, '--help'])).toBe(0);
        expect(printed).toMatch(new RegExp(`^Usage: taskorch ${c}`));
      }
      printed = '';
      expect(await run(['--help'])).toBe(0);
      for (const c of commands) expect(printed).toMatch(new RegExp(`^  ${c}\\b`, 'm'));
    } finally {
      write.mockRestore();
    }
  });

  it('the real program exits 2 on a usage error and names the commands', async () => {
    const [unknown, sub] = await Promise.all([cli(['frobnicate']), cli(['schedules', 'frobnicate'])]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/commands: start, submit, status, list, cancel, review, approve, agents, sessions, schedules, events, timeline/);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toMatch(/^taskorch: unknown subcommand "frobnicate" of schedules/);
  });
});
