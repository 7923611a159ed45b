import net from 'node:net';
import { afterAll, beforeAll, it } from 'vitest';
import { json, readSse, startTestApp, type TestApp } from './helpers/app.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp({ PARTIAL_CHUNK_CHARS: '1', STREAM_MAX_BUFFER_BYTES: '1024' }); });
afterAll(async () => { await t?.stop(); });

it('slow', async () => {
  const res = await fetch(`${t.base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'Explain streams. Then explain sockets. And then explain buffers. ' + 'x'.repeat(300), mode: 'standard' }) });
  const { task_id } = await json(res);
  const sock = net.connect(t.app.gatewayPort!, '127.0.0.1');
  sock.pause();
  let closed = false;
  sock.on('close', () => { closed = true; });
  sock.on('error', (e) => console.log('sock err', e.message));
  sock.write(`GET /api/v1/stream/sse?workflow_id=${task_id} HTTP/1.1\r\nHost: x\r\n\r\n`);
  const gw = t.app.gateway as any;
  const iv = setInterval(() => { const f = gw.hub.feeds.get(task_id); console.log('sse', gw.sse.size, 'subs', f?.subscribers.size, 'last', f?.lastSeq, [...(f?.subscribers ?? [])].map((s: any) => [s.cursor, s.backpressured])); }, 500);
  const r = await readSse(`${t.base}/api/v1/stream/sse?workflow_id=${task_id}`, { timeoutMs: 25000 });
  console.log('normal got', r.events.length, r.events.at(-1), r.events.reduce((n, e) => n + e.data.length, 0));
  await new Promise((r) => setTimeout(r, 12000));
  clearInterval(iv);
  console.log('closed', closed);
}, 60000);
