/**
 * Reference for task intake: the straightforward implementation of POST /api/v1/tasks with
 * node:http and no batching. Per request: read and parse the JSON body, INSERT the row into
 * the same `tasks` table with the `postgres` driver (one statement per request, a pool of 10
 * connections like the service's default), js.publish the start message to the same TASKS
 * work queue with de-duplication id = task id, then answer 200 with the same JSON shape.
 * Driven by bench/run.ts over IPC.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import postgres from 'postgres';
import { subjects } from '../../src/bus/subjects.js';
import { serve } from '../lib/ipc.js';
import { listenLocal } from '../lib/listen.js';

let sql: postgres.Sql | undefined;
let nc: NatsConnection | undefined;
const enc = new TextEncoder();

function reply(res: http.ServerResponse, status: number, body: unknown): void {
  const s = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(s) });
  res.end(s);
}

serve(
  {
    async listen(a: { natsUrl: string; dbUrl: string }) {
      sql = postgres(a.dbUrl, { max: 10, onnotice: () => {} });
      // The best settings of the same client, as the service uses them (no stack per request).
      nc = await connect({ servers: a.natsUrl, name: 'bench-ref-intake', noAsyncTraces: true });
      const js = jetstream(nc);
      const db = sql;
      const server = http.createServer({ noDelay: true }, (req, res) => {
        if (req.method !== 'POST' || req.url !== '/api/v1/tasks') return reply(res, 404, { error: 'Not found' });
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', async () => {
          let body: { query?: unknown; mode?: unknown; session_id?: unknown; context?: unknown };
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return reply(res, 400, { error: 'invalid JSON body' });
          }
          const query = typeof body.query === 'string' ? body.query.trim() : '';
          if (!query) return reply(res, 400, { error: 'query is required' });
          const mode = typeof body.mode === 'string' ? body.mode : 'simple';
          const id = randomUUID();
          const sessionId = typeof body.session_id === 'string' && body.session_id ? body.session_id : randomUUID();
          const context = body.context && typeof body.context === 'object' ? (body.context as Record<string, unknown>) : {};
          const now = new Date();
          try {
            await db`INSERT INTO tasks (id, session_id, query, context, options, mode, status, created_at, updated_at)
              VALUES (${id}::uuid, ${sessionId}, ${query}, ${db.json(context as postgres.JSONValue)}, ${db.json({ model_tier: 'small' })},
                      ${`EXECUTION_MODE_${mode.toUpperCase()}`}, 'TASK_STATUS_QUEUED', ${now}, ${now})`;
            const start = { task_id: id, session_id: sessionId, query, context, mode, model_tier: 'small', submitted_at: now.toISOString() };
            await js.publish(subjects.taskStart(id), enc.encode(JSON.stringify(start)), { msgID: id });
          } catch (err) {
            return reply(res, 500, { error: (err as Error).message });
          }
          reply(res, 200, { task_id: id, status: 'STATUS_CODE_OK', message: 'Task submitted successfully', created_at: now.toISOString() });
        });
      });
      return listenLocal(server, 1024);
    },
  },
  () => {
    void nc?.close();
    void sql?.end({ timeout: 1 });
  },
);
