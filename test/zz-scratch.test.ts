import net from 'node:net';
import { afterAll, beforeAll, it, expect } from 'vitest';
import { OfflineProvider, type LlmProvider, type LlmRequest, type LlmResult } from '../src/llm/index.js';
import { json, readSse, startTestApp, waitFor, type TestApp } from './helpers/app.js';

class TestLlm implements LlmProvider {
  readonly name = 'offline';
  private readonly inner = new OfflineProvider({ chunkDelayMs: 0 });
  private readonly gates = new Map<string, { promise: Promise<void>; open: () => void }>();
  gate(key: string) {
    let g = this.gates.get(key);
    if (!g) { let open!: () => void; const promise = new Promise<void>((r) => (open = r)); g = { promise, open }; this.gates.set(key, g); }
    return g;
  }
  async complete(req: LlmRequest, onDelta?: (delta: string) => void): Promise<LlmResult> {
    const user = [...req.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const system = req.messages.find((m) => m.role === 'system')?.content ?? '';
    const gate = /\[gate:([\w-]+)\]/.exec(user);
    if (gate) await this.gate(gate[1]).promise;
    const g2 = /\[gate2:([\w-]+)\]/.exec(user);
    if (g2 && /^Combine these subtask results/.test(user)) await this.gate(g2[1]).promise;
    const big = /\[big:(\d+)\]/.exec(user);
    if (!big) return this.inner.complete(req, onDelta);
    const text = /json array of subtasks/i.test(system) ? JSON.stringify([1,2,3,4,5,6,7,8].map((i) => ({ id: `part-${i}`, description: `part ${i}` }))) : 'x'.repeat(Number(big[1]));
    for (let i = 0; i < text.length; i += 65_536) onDelta?.(text.slice(i, i + 65_536));
    return { text, model: 'offline-deterministic', provider: 'offline', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, costUsd: 0 } };
  }
}
const llm = new TestLlm();
let t: TestApp;
beforeAll(async () => { t = await startTestApp({ PARTIAL_CHUNK_CHARS: '8192', SSE_HEARTBEAT_SECONDS: '3600' }, { llm }); });
afterAll(async () => { await t?.stop(); });

it('tail', async () => {
  const id = (await json(await fetch(`${t.base}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '[gate2:tail] [big:800000] go', mode: 'standard' }) }))).task_id;
  // keep the feed alive and learn the seq before the synthesizer
  const gw = t.app.gateway as any;
  let lastBefore = 0;
  const keeper = readSse(`${t.base}/api/v1/stream/sse?workflow_id=${id}`, { timeoutMs: 60000, until: (e) => { const d = JSON.parse(e.data); if (d.type === 'AGENT_STARTED' && d.agent_id === 'synthesizer') { lastBefore = d.seq; return true; } return false; } });
  await keeper;
  console.log('seq before gate', lastBefore, 'feed last', gw.hub.feeds.get(id).lastSeq);
  const sock = net.connect(t.app.gatewayPort!, '127.0.0.1');
  sock.pause();
  sock.write(`GET /api/v1/stream/sse?workflow_id=${id} HTTP/1.1\r\nHost: x\r\n\r\n`);
  await waitFor(async () => gw.hub.feeds.get(id)?.subscribers.size === 1);
  const sub = [...gw.hub.feeds.get(id).subscribers][0];
  await new Promise((r) => setTimeout(r, 300));
  console.log('paused: cursor', sub.cursor, 'bp', sub.backpressured);
  let text = '';
  sock.on('data', (c) => { text += c.toString('latin1'); });
  sock.resume();
  const want = `"seq":${lastBefore},`;
  const t0 = Date.now();
  await waitFor(async () => text.includes(want), 20000, 50).catch(() => {});
  console.log('got last?', text.includes(want), Date.now() - t0, 'cursor', sub.cursor, 'bp', sub.backpressured, 'bytes', text.length);
  llm.gate('tail').open();
  sock.destroy();
}, 60000);
