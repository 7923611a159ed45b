/**
 * The HTTP timeouts the gateway actually has (README, "HTTP timeouts"). uWebSockets.js 20.30
 * runs one fixed timer of about 10 s (granularity 4 s) for a request being received, a
 * response the client stops reading and an idle keep-alive connection, so the spec's read
 * (30 s), write (30 s) and idle (60 s) limits cannot be set; and none while a handler has not
 * answered, which lets SSE streams stay open (they end after SSE_INACTIVITY_SECONDS). This
 * test pins those numbers, so an upgrade of uWS that changes them fails here. Requests go
 * over raw sockets so nothing completes them for us.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';

let t: TestApp;
let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'taskorch-timeouts-'));
  t = await startTestApp({ WORKSPACE_ROOT: root, SSE_HEARTBEAT_SECONDS: '60' });
});
afterAll(async () => {
  await t?.stop();
  await rm(root, { recursive: true, force: true });
});

interface Seen {
  /** Milliseconds from connecting to the server closing the connection; undefined: still open. */
  closedAfter?: number;
  bytes: number;
  head: string;
}

/**
 * Connects, runs `start`, and records what comes back until the server closes or `maxMs`.
 * `resumeAt`: the client reads nothing before then (a paused socket also cannot see the
 * server's close, so a close is observed only once it reads again).
 */
function probe(start: (s: net.Socket) => void, maxMs: number, o: { resumeAt?: number } = {}): Promise<Seen> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let bytes = 0;
    let head = '';
    const s = net.connect(Number(new URL(t.base).port), '127.0.0.1', () => start(s));
    if (o.resumeAt) {
      s.pause();
      setTimeout(() => s.resume(), o.resumeAt);
    }
    s.on('data', (d: Buffer) => {
      bytes += d.length;
      if (head.length < 200) head += d.toString('latin1').slice(0, 200);
    });
    s.on('error', () => {});
    const done = (closedAfter?: number) => {
      clearTimeout(timer);
      s.destroy();
      resolve({ closedAfter, bytes, head });
    };
    s.on('close', () => done(Date.now() - t0));
    const timer = setTimeout(() => done(undefined), maxMs);
  });
}

/** Writes `piece` every 2 s until the socket closes. */
const trickle = (s: net.Socket, piece: string) => {
  const iv = setInterval(() => (s.destroyed ? clearInterval(iv) : s.write(piece)), 2000);
};

describe('HTTP timeouts', () => {
  it('drops slow requests, stalled responses and idle connections after ~10 s, never an open SSE stream', { timeout: 60_000 }, async () => {
    // A workspace file far larger than the socket buffers, for clients that stop reading.
    const ext = `timeouts-${randomUUID()}`;
    const sub = await fetch(`${t.base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'hello', session_id: ext }),
    });
    expect(sub.status).toBe(200);
    const { task_id } = await json(sub);
    const [{ id }] = await t.app.store.sql`SELECT id::text FROM sessions WHERE external_id = ${ext}`;
    await mkdir(join(root, id));
    await writeFile(join(root, id, 'big.bin'), '');
    await truncate(join(root, id, 'big.bin'), 64 * 1024 * 1024);
    await waitFor(async () => (await json(await fetch(`${t.base}/api/v1/tasks/${task_id}`))).status === 'TASK_STATUS_COMPLETED');

    const SIZE = 64 * 1024 * 1024;
    const download = `GET /api/v1/sessions/${id}/files/big.bin HTTP/1.1\r\nHost: x\r\n\r\n`;
    const [idle, slowHeaders, slowBody, stalledShort, stalledLong, sse] = await Promise.all([
      // Idle: one request answered, then nothing more on the keep-alive connection.
      probe((s) => s.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n'), 30_000),
      // Read: the head never completes (a header every 2 s).
      probe((s) => {
        s.write('GET /health HTTP/1.1\r\nHost: x\r\n');
        trickle(s, 'X-Slow: 1\r\n');
      }, 30_000),
      // Read: the body never completes (a byte every 2 s of 100 announced).
      probe((s) => {
        s.write('POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
        trickle(s, ' ');
      }, 30_000),
      // Write: the client stops reading a 64 MB download for 5 s, then reads on: it gets it all.
      probe((s) => s.write(download), 12_000, { resumeAt: 5_000 }),
      // Write: the same for 16 s: the server dropped the response meanwhile.
      probe((s) => s.write(download), 30_000, { resumeAt: 16_000 }),
      // An SSE stream with nothing to send for 16 s (no event, heartbeat every 60 s) stays open.
      probe((s) => s.write(`GET /api/v1/stream/sse?workflow_id=${randomUUID()} HTTP/1.1\r\nHost: x\r\n\r\n`), 16_000),
    ]);

    for (const [name, p] of Object.entries({ idle, slowHeaders, slowBody })) {
      expect(p.closedAfter, `${name} closed by the server`).toBeDefined();
      expect(p.closedAfter!, name).toBeGreaterThan(6_000);
      expect(p.closedAfter!, name).toBeLessThan(16_000);
    }
    expect(idle.head).toMatch(/^HTTP\/1\.1 200 /);
    // Dropped, not answered: uWS closes without a response.
    expect(slowHeaders.bytes).toBe(0);
    expect(slowBody.bytes).toBe(0);
    // A client that pauses 5 s gets the whole file; one that pauses 16 s finds the response cut.
    expect(stalledShort.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(stalledShort.bytes).toBeGreaterThan(SIZE);
    expect(stalledLong.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(stalledLong.bytes).toBeLessThan(SIZE);
    expect(stalledLong.closedAfter, 'the cut download is closed').toBeDefined();
    expect(sse.closedAfter).toBeUndefined();
    expect(sse.head).toMatch(/^HTTP\/1\.1 200 /);
  });
});
