/** A QUEUED row whose start message never reached the work queue is re-published, once. */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startMessage, type QueuedTask } from '../src/tasks/index.js';
import { STREAMS, subjects } from '../src/bus/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

describe('reconciler', () => {
  it('re-publishes the start message of an orphaned QUEUED task, which then completes', async () => {
    t = await startTestApp();
    const id = randomUUID();
    await t.app.store.insertTask({
      id,
      session_id: 's',
      query: 'orphan',
      context: {},
      options: { mode: 'simple' },
      mode: 'EXECUTION_MODE_SIMPLE',
      created_at: new Date(Date.now() - 60_000),
    });
    expect(await t.app.reconciler!.runOnce()).toContain(id);
    const s = await waitFor(async () => {
      const b = await json(await fetch(`${t!.base}/api/v1/tasks/${id}`));
      return b.status === 'TASK_STATUS_COMPLETED' ? b : undefined;
    });
    expect(s.query).toBe('orphan');
  });

  it('leaves a QUEUED task alone while its start message waits in the queue', async () => {
    // No worker: the start message stays in the queue.
    t = await startTestApp({ ROLES: 'gateway,orchestrator' });
    const { task_id } = await json(
      await fetch(`${t.base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"waiting"}' }),
    );
    // Beside it, an orphan of the same age: proof that the pass looked at rows this old.
    const orphan = randomUUID();
    await t.app.store.insertTask({
      id: orphan,
      session_id: 's',
      query: 'orphan beside a queued task',
      context: {},
      options: { mode: 'simple' },
      mode: 'EXECUTION_MODE_SIMPLE',
      created_at: new Date(Date.now() - 60_000),
    });
    await t.app.store.sql`UPDATE tasks SET created_at = now() - interval '1 minute' WHERE id = ${task_id}::uuid`;
    try {
      // The first call may join the pass the app started with; the second is a pass of its own.
      const republished = [...(await t.app.reconciler!.runOnce()), ...(await t.app.reconciler!.runOnce())];
      // Asserted on what the reconciler reports: JetStream's de-duplication window would
      // swallow a second copy of the start message, so the queue alone cannot tell.
      expect(republished).toContain(orphan);
      expect(republished).not.toContain(task_id);
    } finally {
      // Leave nothing QUEUED behind for this file's other reconcilers (and, on PGlite, other files': they share one database there).
      await t.app.store.sql`UPDATE tasks SET status = 'TASK_STATUS_CANCELLED' WHERE id IN (${task_id}::uuid, ${orphan}::uuid)`;
    }
  });
});

describe('the start message is built once', () => {
  it('a start message rebuilt from the stored row (as the reconciler does) equals the one the submission published', async () => {
    // No worker: start messages stay in the queue where they can be read.
    t = await startTestApp({ ROLES: 'gateway,orchestrator' });
    const { task_id: id } = await json(
      await fetch(`${t.base}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
        body: JSON.stringify({ query: 'the same message twice', mode: 'supervisor', model_tier: 'large', max_concurrent_agents: 3 }),
      }),
    );
    const { jsm } = t.app.bus;
    const read = async () =>
      JSON.parse(new TextDecoder().decode((await jsm.streams.getMessage(STREAMS.tasks, { last_by_subj: subjects.taskStart(id) }))!.data));
    const submitted = await read();
    expect(submitted).toMatchObject({ task_id: id, mode: 'supervisor', model_tier: 'large', max_concurrent_agents: 3, new_session: true });
    expect(submitted.trace_id).toBe('0af7651916cd43dd8448eb211c80319c');
    // What the reconciler would publish for this row (it publishes startMessage(row); a
    // re-publish here would be dropped by JetStream's de-duplication of the task id).
    const [row] = await t.app.store
      .sql`SELECT id, session_id, user_id, tenant_id, query, context, options, mode, trace_id, created_at FROM tasks WHERE id = ${id}`;
    try {
      expect(startMessage(row as unknown as QueuedTask)).toEqual(submitted);
    } finally {
      await jsm.streams.purge(STREAMS.tasks, { filter: subjects.taskStart(id) });
      await t.app.store.sql`DELETE FROM tasks WHERE id = ${id}`;
    }
  });
});
