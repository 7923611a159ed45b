/**
 * `npm start` on the embedded defaults: with no NATS_URL and no DATABASE_URL the service
 * starts its own nats-server and PGlite under DATA_DIR, runs a task end to end, and exits
 * cleanly (code 0) on SIGTERM and on SIGINT; data survives a restart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { json, waitFor } from './helpers/app.js';
import { embeddedEnv, gatewayBase, startServiceProcess } from './helpers/process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'taskorch-embedded-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('embedded defaults', () => {
  it('starts, runs a task, stops on SIGTERM, and keeps the task after a restart (SIGINT)', async () => {
    const env = embeddedEnv(dataDir);
    let p = await startServiceProcess(env);
    let base = await gatewayBase(p);
    expect((await json(await fetch(`${base}/readiness`))).status).toBe('ready');
    const { task_id } = await json(
      await fetch(`${base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"embedded hello"}' }),
    );
    const s = await waitFor(async () => {
      const b = await json(await fetch(`${base}/api/v1/tasks/${task_id}`));
      return b.status === 'TASK_STATUS_COMPLETED' ? b : undefined;
    });
    expect(s.provider).toBe('offline');
    p.kill('SIGTERM');
    expect(await p.exited).toBe(0);

    p = await startServiceProcess(env);
    base = await gatewayBase(p);
    const again = await json(await fetch(`${base}/api/v1/tasks/${task_id}`));
    expect(again.status).toBe('TASK_STATUS_COMPLETED');
    p.kill('SIGINT');
    expect(await p.exited).toBe(0);
  }, 90_000);
});
