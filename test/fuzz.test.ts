/**
 * Malformed input over every route the gateway registers (recorded from its uWebSockets.js
 * app, so a new route is fuzzed without editing this file): broken and wrongly typed JSON,
 * NUL characters, deep nesting, huge strings, bad UTF-8, path, query, method and header tricks.
 * The guard: no answer is 5xx and every request is answered, each within its own timeout.
 * Requests go over raw sockets so nothing (fetch's URL normalisation, header validation)
 * cleans them up on the way. Requests the uWebSockets.js parser cannot answer at all are
 * pinned to the behaviour deploy/http-edge.md documents.
 *
 * Random mutations are seeded: FUZZ_SEED=<n> replays a run (the seed is in every failure).
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { rng } from './helpers/rng.js';
import type { RegisteredRoute } from './helpers/uws-routes.js';

const registered = vi.hoisted(() => [] as RegisteredRoute[]);

// Records every route the gateway registers; the app itself is untouched.
vi.mock('uWebSockets.js', async (importOriginal) => (await import('./helpers/uws-routes.js')).recordRoutes(await importOriginal(), registered));

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const rand = rng(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

let t: TestApp;
let port = 0;
let auth: Record<string, string> = {};
const fx = { task: '', session: '', schedule: '', apiKey: '' };

beforeAll(async () => {
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    JWT_SECRET: 'fuzz-test-secret-0123456789-abcdefghijklmnopqrstuvwxyz',
    PASSWORD_SCRYPT_N: '1024',
    RATE_LIMIT_REQUESTS: '1000000',
    RATE_LIMIT_TASK_LIST_BURST: '1000000',
  });
  port = Number(new URL(t.base).port);
  const post = (path: string, body: unknown, h: Record<string, string> = {}) =>
    fetch(t.base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...h }, body: JSON.stringify(body) });
  const reg = await json(await post('/api/v1/auth/register', { email: `fuzz-${randomUUID()}@example.com`, password: 'password123' }));
  // Not the default key: the fuzzed POST /auth/refresh-key replaces that one.
  const key = await json(await post('/api/v1/auth/api-keys', { name: 'fuzz' }, { 'X-API-Key': reg.api_key }));
  auth = { 'X-API-Key': key.api_key };
  fx.apiKey = (await json(await post('/api/v1/auth/api-keys', { name: 'fuzz-2' }, auth))).id;
  const task = await json(await post('/api/v1/tasks', { query: 'fuzz fixture', mode: 'simple' }, auth));
  fx.task = task.task_id;
  const done = await waitFor(async () => {
    const s = await json(await fetch(`${t.base}/api/v1/tasks/${fx.task}`, { headers: auth }));
    return s.status === 'TASK_STATUS_COMPLETED' ? s : undefined;
  }, 20_000);
  fx.session = done.session_id;
  const sched = await json(await post('/api/v1/schedules', { name: 'fuzz', cron_expression: '0 * * * *', timezone: 'UTC', task_query: 'fuzz' }, auth));
  fx.schedule = sched.schedule_id;
});
afterAll(async () => {
  await t?.stop();
});

// --- a raw HTTP/1.1 client -----------------------------------------------------------------

interface Answer {
  /** Status of the response; undefined when none came. */
  status?: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Bytes received in all. */
  bytes: number;
  /** The server closed the connection (with or without an answer). */
  closed: boolean;
  timedOut: boolean;
  ms: number;
}

/**
 * Sends `data` on a fresh connection and waits for one complete response (Content-Length,
 * chunked, or until close; an event stream or a 101 counts once its head is in), the server
 * closing, or `timeoutMs`.
 */
function send(data: Buffer | Buffer[], timeoutMs: number, o: { head?: boolean } = {}): Promise<Answer> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const s = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let finished = false;
    let parsed: { status: number; headers: Record<string, string>; bodyAt: number } | undefined;
    const finish = (closed: boolean, timedOut: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      s.destroy();
      const body = parsed ? buf.subarray(parsed.bodyAt) : Buffer.alloc(0);
      resolve({ status: parsed?.status, headers: parsed?.headers ?? {}, body, bytes: buf.length, closed, timedOut, ms: Date.now() - t0 });
    };
    const timer = setTimeout(() => finish(false, true), timeoutMs);
    s.setNoDelay(true);
    s.on('connect', () => {
      // Segments of an array go out 50 ms apart, so that the server reads them separately.
      const segs = Array.isArray(data) ? data : [data];
      segs.forEach((d, i) => (i === 0 ? s.write(d) : setTimeout(() => !s.destroyed && s.write(d), 50 * i)));
    });
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      while (!parsed) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        // An interim answer (100 Continue) is not the answer: the real one follows.
        if (/^HTTP\/1\.[01] 1(?!01)\d\d/.test(buf.subarray(0, 12).toString('latin1'))) {
          buf = buf.subarray(end + 4);
          continue;
        }
        const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
        const headers: Record<string, string> = {};
        for (const l of lines.slice(1)) {
          const c = l.indexOf(':');
          if (c > 0) headers[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
        }
        parsed = { status: m ? Number(m[1]) : -1, headers, bodyAt: end + 4 };
      }
      const { status, headers, bodyAt } = parsed;
      const body = buf.length - bodyAt;
      if (o.head || status === 101 || status === 204 || status === 304 || (headers['content-type'] ?? '').startsWith('text/event-stream')) finish(false, false);
      else if (headers['content-length'] !== undefined && body >= Number(headers['content-length'])) finish(false, false);
      else if (/chunked/i.test(headers['transfer-encoding'] ?? '') && buf.subarray(bodyAt).includes('0\r\n\r\n')) finish(false, false);
    });
    s.on('end', () => finish(true, false));
    s.on('close', () => finish(true, false));
    s.on('error', () => finish(true, false));
  });
}

type Headers = [string, string | Buffer][];

function request(method: string, target: string, headers: Headers = [], body?: Buffer | string): Buffer {
  const parts: Buffer[] = [Buffer.from(`${method} ${target} HTTP/1.1\r\nHost: fuzz\r\n`, 'latin1')];
  for (const [k, v] of headers) parts.push(Buffer.from(`${k}: `, 'latin1'), Buffer.isBuffer(v) ? v : Buffer.from(v, 'latin1'), Buffer.from('\r\n'));
  const b = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  if (b) parts.push(Buffer.from(`Content-Length: ${b.length}\r\n`));
  parts.push(Buffer.from('\r\n'));
  if (b) parts.push(b);
  return Buffer.concat(parts);
}

interface Case {
  name: string;
  data: Buffer;
  head?: boolean;
}

const REQUEST_TIMEOUT_MS = 10_000;

/** Runs the cases `width` at a time; returns those answered with 5xx or not answered at all. */
async function runCases(cases: Case[], width = 6): Promise<string[]> {
  const bad: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++];
      const a = await send(c.data, REQUEST_TIMEOUT_MS, { head: c.head });
      if (a.status === undefined || a.status < 100)
        bad.push(`${c.name}: ${a.timedOut ? `no answer within ${REQUEST_TIMEOUT_MS} ms` : `closed after ${a.ms} ms without an answer`}`);
      else if (a.status >= 500) bad.push(`${c.name}: ${a.status} ${a.body.toString('utf8').slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return bad;
}

function report(bad: string[], total: number): string {
  return `FUZZ_SEED=${SEED}: ${bad.length} of ${total} requests answered 5xx or not at all\n${bad.slice(0, 400).join('\n')}`;
}

const short = (s: string) => (s.length > 100 ? `${s.slice(0, 60)}...(${s.length} chars)` : s);

// --- inputs ----------------------------------------------------------------------------------

/** A body each JSON route accepts (or nearly), so that mutating one field reaches deep code. */
function baseBody(method: string, pattern: string): Record<string, unknown> {
  if (pattern === '/api/v1/tasks' || pattern === '/api/v1/tasks/stream') {
    return { query: 'fuzz', session_id: 'fuzz-session', context: { topic: 'analyst' }, mode: 'simple', model_tier: 'small', max_concurrent_agents: 2 };
  }
  if (pattern === '/api/v1/auth/register') return { email: `f-${randomUUID()}@example.com`, password: 'password123', name: 'n', tenant_name: 't' };
  if (pattern === '/api/v1/auth/login') return { email: 'nobody@example.com', password: 'password123' };
  if (pattern === '/api/v1/auth/refresh') return { refresh_token: 'x.y.z' };
  if (pattern === '/api/v1/auth/api-keys') return { name: 'k', expires_in_days: 1 };
  if (pattern === '/api/v1/sessions/:id') return { title: 'title' };
  if (pattern === '/api/v1/schedules' || (pattern === '/api/v1/schedules/:id' && method === 'put')) {
    return {
      name: 'n',
      description: 'd',
      cron_expression: '0 * * * *',
      timezone: 'UTC',
      task_query: 'q',
      task_context: { a: 1 },
      max_budget_per_run_usd: 1,
      timeout_seconds: 60,
    };
  }
  return { reason: 'fuzz' };
}

const nested = (n: number, kind: 'array' | 'object') => (kind === 'array' ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n));

/** JSON text fragments for one field (some are not representable as JS values). */
const VALUES = [
  'null',
  'true',
  '0',
  '-1',
  '1.5',
  '1e308',
  '-1e308',
  '1e999',
  '123456789012345678901234567890',
  '""',
  '"\\u0000"',
  '"a\\u0000b"',
  '"\\ud800"',
  '"\\udc00x"',
  '"\\ud83d\\ude00"',
  '"\u{1F4A9}"',
  '[]',
  '{}',
  '[[[]]]',
  '{"a":{"b":{}}}',
  `"${'x'.repeat(300)}"`,
  `"${'x'.repeat(200_000)}"`,
  '"\\"; DROP TABLE tasks; --"',
  '"../../etc/passwd"',
  '"* * * * *"',
  '"Invalid/Zone"',
  '"%00"',
  '{"k\\u0000":1}',
  nested(50, 'object'),
  nested(10_000, 'array'),
];

const SYNTAX = [
  '',
  ' ',
  '{',
  '}',
  '{"a":',
  '[1,]',
  '{"a":1}}',
  'nul',
  'tru',
  '"\\u00"',
  '{"a":"\\x"}',
  '{"a":01}',
  'NaN',
  '{a:1}',
  "{'a':1}",
  '{"a":1,}',
  '\u0000',
  '{"a":"\u0000"}',
  '{"a":"\n"}',
  '\uFEFF{}',
  '{"__proto__":{"x":1}}',
  '{"constructor":{"prototype":{}}}',
  'null',
  'true',
  '1',
  '"s"',
  '[]',
  '[{}]',
  '{}',
  nested(10_000, 'array'),
  nested(100_000, 'array'),
  nested(10_000, 'object'),
];

const BAD_UTF8 = [[0xff], [0xfe], [0x80], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xf4, 0x90, 0x80, 0x80]];

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=utf-16',
  'multipart/form-data; boundary=x',
  'application/json\u00ff',
];

/** Random byte-level damage to a JSON text: the bytes JSON cares about, and some it must refuse. */
function mutate(text: string): Buffer {
  const b = [...Buffer.from(text, 'utf8')];
  const interesting = [0x7b, 0x7d, 0x5b, 0x5d, 0x22, 0x2c, 0x3a, 0x5c, 0x00, 0xff, 0x0a, 0x75, 0x30];
  for (let k = 1 + Math.floor(rand() * 4); k > 0; k--) {
    const i = Math.floor(rand() * (b.length + 1));
    const op = rand();
    if (op < 0.4) b.splice(i, 0, pick(interesting));
    else if (op < 0.7) b.splice(i, 1);
    else b[Math.min(i, b.length - 1)] = pick(interesting);
  }
  return Buffer.from(b);
}

const QUERY_PARAMS: Record<string, string[]> = {
  '/api/v1/tasks': ['limit', 'offset', 'session_id', 'status'],
  '/api/v1/tasks/:id/events': ['after_seq', 'limit'],
  '/api/v1/sessions': ['limit', 'offset'],
  '/api/v1/sessions/:id/history': ['limit'],
  '/api/v1/sessions/:id/events': ['limit'],
  '/api/v1/sessions/:id/files': ['path', 'recursive'],
  '/api/v1/schedules': ['page', 'page_size', 'status'],
  '/api/v1/schedules/:id/runs': ['page', 'page_size'],
  '/api/v1/stream/sse': ['workflow_id', 'types', 'last_event_id', 'api_key'],
  '/api/v1/tasks/:id/stream': ['types', 'last_event_id', 'api_key'],
  '/api/v1/stream/ws': ['workflow_id', 'last_event_id'],
};
const QUERY_VALUES = [
  '%00',
  'a%00b',
  '%FF',
  '%',
  '%zz',
  '-1',
  '0',
  '99999999999999999999',
  '1e3',
  '1.5',
  '',
  '%C0%80',
  '%ED%A0%80',
  'x'.repeat(1500),
  '%E2%82%AC',
  'true',
  'null',
  '%5B%5D',
  "'",
  '%22',
  '%0A',
  '%0D%0A',
  '+',
  '00000000-0000-0000-0000-000000000000',
  'QUEUED',
  'CANCELED',
];
const ID_VALUES = [
  '%00',
  'a%00b',
  '%FF',
  '%',
  '%zz',
  '..',
  '%2e%2e',
  '%2F',
  'a%2Fb',
  '.',
  'x'.repeat(1500),
  '%E2%80%AE',
  '%C0%80',
  '%ED%A0%80',
  "'",
  '%27%3B--',
  '0',
  '-1',
  '00000000-0000-0000-0000-000000000000',
  '%20',
  '%0A',
  '%09',
];
const WILDCARD_VALUES = [
  'a.txt',
  '%00',
  'a%00.txt',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e/x',
  '%FF',
  '%',
  'x'.repeat(1500),
  'a/b/c',
  '%5C..%5Cx',
  '/etc/passwd',
  'C:%5Cx',
  '',
];
const PATHS = [
  '/',
  '//',
  '/api',
  '/api/v1',
  '/api/v1/',
  '/api/v1/tasks/',
  '//api/v1/tasks',
  '/api/v1//tasks',
  '/api/v1/tasks/../health',
  '/api/v1/./tasks',
  '/%00',
  '/api/v1/tasks%00',
  '/api/v1/tasks/%2e%2e/%2e%2e/health',
  `/${'a'.repeat(3000)}`,
  '/api/v1/tasks?',
  '/api/v1/tasks?&&&==',
  '/api/v1/tasks?%00=1',
  '/api/v1/tasks?a=1&a=2',
  '/api/v1/sessions/x/files/',
  '/api/v1/sessions//files/a',
  '/api/v1/schedules/%00/pause',
  '/health?%',
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT'];
const WS_HEADERS: Headers = [
  ['Upgrade', 'websocket'],
  ['Connection', 'Upgrade'],
  ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='],
  ['Sec-WebSocket-Version', '13'],
];

const HTTP_METHOD: Record<string, string> = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', del: 'DELETE', ws: 'GET', options: 'OPTIONS', any: 'GET' };

function fixtureId(pattern: string): string {
  if (pattern.startsWith('/api/v1/tasks/')) return fx.task;
  if (pattern.startsWith('/api/v1/sessions/')) return fx.session;
  if (pattern.startsWith('/api/v1/schedules/')) return fx.schedule;
  if (pattern.startsWith('/api/v1/auth/api-keys/')) return fx.apiKey;
  return randomUUID();
}

/** Every concrete target of a pattern: fixture ids and the malformed ones, and the wildcard's values. */
function targets(method: string, pattern: string): string[] {
  if (!pattern.includes(':') && !pattern.includes('*')) return [pattern];
  const ids = [...(method === 'del' ? [] : [fixtureId(pattern)]), randomUUID(), ...ID_VALUES];
  const out: string[] = [];
  for (const id of ids) {
    const p = pattern.replace(':id', id);
    if (p.endsWith('/*')) {
      for (const w of WILDCARD_VALUES) out.push(p.slice(0, -1) + w);
    } else out.push(p);
  }
  return out.filter((p) => !p.startsWith('/*'));
}

function routeCases(): Case[] {
  const cases: Case[] = [];
  const add = (method: string, target: string, headers: Headers, body: Buffer | string | undefined, label: string) =>
    cases.push({ name: `${method} ${short(target)} [${label}]`, data: request(method, target, headers, body), head: method === 'HEAD' });
  const withAuth = (h: Headers = []): Headers => [...Object.entries(auth), ...h];
  for (const { method: m, pattern } of registered) {
    const method = HTTP_METHOD[m] ?? m.toUpperCase();
    const extra = m === 'ws' ? WS_HEADERS : [];
    if (pattern === '/*') {
      for (const p of PATHS) for (const verb of METHODS) add(verb, p, withAuth(), undefined, 'path trick');
      continue;
    }
    const all = targets(m, pattern);
    // Paths: the fixture id and every malformed one (and once without credentials).
    for (const target of all) {
      add(method, target, withAuth(extra), m === 'post' || m === 'put' || m === 'patch' ? JSON.stringify(baseBody(m, pattern)) : undefined, 'id');
    }
    add(method, all[0], extra, undefined, 'no credentials');
    // Query parameters.
    const params = QUERY_PARAMS[pattern] ?? ['limit'];
    const base = all[0] + (pattern === '/api/v1/stream/sse' || pattern === '/api/v1/stream/ws' ? `?workflow_id=${fx.task}&` : '?');
    for (const name of params) for (const v of QUERY_VALUES) add(method, `${base}${name}=${v}`, withAuth(extra), undefined, 'query');
    for (const q of ['%00=1', 'a=%00', '&&&', '==', `${params[0]}=1&${params[0]}=2`]) add(method, `${base}${q}`, withAuth(extra), undefined, 'query');
    // Other methods on the same path.
    for (const verb of ['PUT', 'PATCH', 'DELETE', 'HEAD', 'TRACE']) if (verb !== method) add(verb, all[0], withAuth(), undefined, 'method');
    if (!(m === 'post' || m === 'put' || m === 'patch')) continue;

    // JSON bodies.
    const target = all[0];
    const json = (b: Buffer | string, label: string, ct = 'application/json') => add(method, target, withAuth([['Content-Type', ct]]), b, label);
    const baseObj = baseBody(m, pattern);
    const baseText = JSON.stringify(baseObj);
    for (const s of SYNTAX) json(s, `syntax ${short(JSON.stringify(s))}`);
    for (const field of Object.keys(baseObj)) {
      for (const v of VALUES) {
        const rest = JSON.stringify({ ...baseObj, [field]: 0 }).replace(`"${field}":0`, `"${field}":${v}`);
        json(rest, `${field}=${short(v)}`);
      }
    }
    json(JSON.stringify({ ...baseObj, 'k\u0000': 1 }), 'NUL in a key');
    for (const bytes of BAD_UTF8) {
      const field = Object.keys(baseObj).find((k) => typeof baseObj[k] === 'string') ?? 'reason';
      const [head, tail] = JSON.stringify({ ...baseObj, [field]: '\u0001' }).split('\\u0001');
      json(
        Buffer.concat([Buffer.from(head), Buffer.from('a'), Buffer.from(bytes), Buffer.from('b'), Buffer.from(tail)]),
        `bad UTF-8 ${Buffer.from(bytes).toString('hex')}`,
      );
    }
    json(Buffer.alloc(1024 * 1024 + 1, 0x20), 'over 1 MB');
    json(JSON.stringify({ ...baseObj, pad: 'x'.repeat(1024 * 1024 - baseText.length - 20) }), 'just under 1 MB');
    for (const ct of CONTENT_TYPES) json(baseText, `content-type ${short(ct)}`, ct);
    add(method, target, withAuth(), baseText, 'no content-type');
    for (let i = 0; i < 12; i++) json(mutate(baseText), `random mutation ${i}`);
  }
  return cases;
}

/** Header values uWS passes on: every one must still be answered without a 5xx. */
function headerCases(): Case[] {
  const ff = (s: string) => Buffer.concat([Buffer.from(s), Buffer.from([0xff, 0xfe]), Buffer.from('x')]);
  const key = auth['X-API-Key'];
  const tricks: [string, Headers][] = [
    ['bearer 0xFF', [['Authorization', ff('Bearer ')]]],
    ['bearer empty', [['Authorization', 'Bearer']]],
    ['basic', [['Authorization', 'Basic dXNlcjpwYXNz']]],
    ['bearer fake jwt', [['Authorization', 'Bearer a.b.c']]],
    ['bearer long', [['Authorization', `Bearer ${'x'.repeat(3000)}`]]],
    ['api key 0xFF', [['X-API-Key', ff('sk_')]]],
    ['api key long', [['X-API-Key', `sk_${'x'.repeat(3000)}`]]],
    [
      'two api keys',
      [
        ['X-API-Key', key],
        ['X-API-Key', 'sk_other'],
      ],
    ],
    [
      'idempotency 0xFF',
      [
        ['X-API-Key', key],
        ['Idempotency-Key', ff('k')],
      ],
    ],
    [
      'idempotency long',
      [
        ['X-API-Key', key],
        ['Idempotency-Key', 'k'.repeat(300)],
      ],
    ],
    [
      'idempotency empty',
      [
        ['X-API-Key', key],
        ['Idempotency-Key', ''],
      ],
    ],
    [
      'traceparent junk',
      [
        ['X-API-Key', key],
        ['traceparent', ff('00-')],
      ],
    ],
    [
      'traceparent zero',
      [
        ['X-API-Key', key],
        ['traceparent', `00-${'0'.repeat(32)}-${'0'.repeat(16)}-01`],
      ],
    ],
    [
      'origin 0xFF',
      [
        ['X-API-Key', key],
        ['Origin', ff('http://')],
      ],
    ],
    [
      'content-type 0xFF',
      [
        ['X-API-Key', key],
        ['Content-Type', ff('application/json')],
      ],
    ],
    [
      'two content-types',
      [
        ['X-API-Key', key],
        ['Content-Type', 'text/plain'],
        ['Content-Type', 'application/json'],
      ],
    ],
    [
      'last-event-id junk',
      [
        ['X-API-Key', key],
        ['Last-Event-ID', ff('1-')],
      ],
    ],
    [
      'expect 100-continue',
      [
        ['X-API-Key', key],
        ['Expect', '100-continue'],
        ['Content-Type', 'application/json'],
      ],
    ],
    [
      'tab in value',
      [
        ['X-API-Key', key],
        ['X-Fuzz', 'a\tb'],
      ],
    ],
  ];
  const body = JSON.stringify({ query: 'fuzz headers', mode: 'simple' });
  const cases: Case[] = [];
  for (const [label, h] of tricks) {
    cases.push({ name: `POST /api/v1/tasks [${label}]`, data: request('POST', '/api/v1/tasks', [['Content-Type', 'application/json'], ...h], body) });
    cases.push({ name: `GET /api/v1/sessions [${label}]`, data: request('GET', '/api/v1/sessions', h) });
    cases.push({ name: `GET /api/v1/stream/sse [${label}]`, data: request('GET', `/api/v1/stream/sse?workflow_id=${fx.task}`, h) });
  }
  // A chunked body instead of Content-Length.
  const chunk = Buffer.from(body);
  cases.push({
    name: 'POST /api/v1/tasks [chunked body]',
    data: Buffer.concat([
      Buffer.from(`POST /api/v1/tasks HTTP/1.1\r\nHost: fuzz\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`),
      Buffer.from(`${chunk.length.toString(16)}\r\n`),
      chunk,
      Buffer.from('\r\n0\r\n\r\n'),
    ]),
  });
  return cases;
}

// --- the guard -------------------------------------------------------------------------------

describe('fuzz: every route, malformed input', () => {
  it('records the routes of every gateway module', () => {
    const patterns = new Set(registered.map((r) => `${r.method} ${r.pattern}`));
    for (const r of [
      'post /api/v1/tasks',
      'get /api/v1/tasks/:id',
      'post /api/v1/auth/register',
      'patch /api/v1/sessions/:id',
      'get /api/v1/sessions/:id/files/*',
      'put /api/v1/schedules/:id',
      'get /api/v1/stream/sse',
      'ws /api/v1/stream/ws',
      'any /*',
    ]) {
      expect(patterns, r).toContain(r);
    }
  });

  it('answers every request, none with 5xx', { timeout: 120_000 }, async () => {
    const cases = [...routeCases(), ...headerCases()];
    const bad = await runCases(cases);
    expect(bad, report(bad, cases.length)).toEqual([]);
    // The service is still healthy afterwards.
    const h = await send(request('GET', '/health'), 5000);
    expect(h.status).toBe(200);
  });
});

describe('JSON bodies: refused with 400 before any decoder', () => {
  const post = (path: string, body: Buffer | string) =>
    send(request('POST', path, [...Object.entries(auth), ['Content-Type', 'application/json']], body), REQUEST_TIMEOUT_MS);
  const put = (path: string, body: string) =>
    send(request('PUT', path, [...Object.entries(auth), ['Content-Type', 'application/json']], body), REQUEST_TIMEOUT_MS);
  const errorOf = (a: Answer) => JSON.parse(a.body.toString('utf8')).error as string;

  it('NUL (\\u0000) in a string or key, on every kind of route', async () => {
    const cases: [string, string, 'post' | 'put' | 'patch'][] = [
      ['/api/v1/tasks', '{"query":"a\\u0000b"}', 'post'],
      ['/api/v1/tasks/stream', '{"query":"q","context":{"k":"\\u0000"}}', 'post'],
      ['/api/v1/tasks', '{"query":"q","context":{"k\\u0000":1}}', 'post'],
      ['/api/v1/auth/register', `{"email":"a\\u0000@example.com","password":"password123"}`, 'post'],
      ['/api/v1/auth/login', '{"email":"x@example.com","password":"\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000"}', 'post'],
      ['/api/v1/schedules', '{"name":"\\u0000","cron_expression":"0 * * * *","task_query":"q"}', 'post'],
      [`/api/v1/schedules/${fx.schedule}/pause`, '{"reason":"\\u0000"}', 'post'],
      [`/api/v1/schedules/${fx.schedule}`, '{"description":"\\u0000"}', 'put'],
      [`/api/v1/sessions/${fx.session}`, '{"title":"\\u0000"}', 'patch'],
    ];
    for (const [path, body, m] of cases) {
      const a = await send(request(m.toUpperCase(), path, [...Object.entries(auth), ['Content-Type', 'application/json']], body), REQUEST_TIMEOUT_MS);
      expect(a.status, `${m} ${path} ${body}`).toBe(400);
      expect(errorOf(a), path).toMatch(/NUL/);
    }
    // An escaped backslash before "u0000" is text, not a NUL.
    const ok = await post('/api/v1/tasks', '{"query":"literal \\\\u0000 is fine","mode":"simple"}');
    expect(ok.status).toBe(200);
  });

  it('nesting deeper than 32 levels, however deep, in tasks and schedules', async () => {
    for (const depth of [33, 50, 10_000, 300_000]) {
      const a = await post('/api/v1/tasks', `{"query":"q","context":{"c":${nested(depth - 2, 'array')}}}`);
      expect(a.status, `depth ${depth}`).toBe(400);
      expect(errorOf(a)).toBe('JSON nested deeper than 32 levels');
      const s = await post(
        '/api/v1/schedules',
        `{"name":"n","cron_expression":"0 * * * *","task_query":"q","task_context":{"a":${nested(depth - 2, 'array')}}}`,
      );
      expect(s.status, `schedule depth ${depth}`).toBe(400);
      const u = await put(
        `/api/v1/schedules/${fx.schedule}`,
        `{"task_context":${nested(depth - 1, 'object').slice(0, 5 * 30)}${nested(depth - 31, 'array')}${'}'.repeat(30)}}`,
      );
      expect(u.status, `schedule update depth ${depth}`).toBe(400);
    }
    // Brackets inside strings are text.
    const text = await post('/api/v1/tasks', JSON.stringify({ query: '['.repeat(1000), mode: 'simple' }));
    expect(text.status).toBe(200);
    // 32 levels in all (the body is level 1) still go through to the task.
    const deepest = await post('/api/v1/tasks', `{"query":"q","mode":"simple","context":{"c":${nested(30, 'array')}}}`);
    expect(deepest.status, deepest.body.toString()).toBe(200);
  });

  it('bad UTF-8 and unpaired surrogates', async () => {
    for (const bytes of BAD_UTF8) {
      const a = await post('/api/v1/tasks', Buffer.concat([Buffer.from('{"query":"a'), Buffer.from(bytes), Buffer.from('b"}')]));
      expect(a.status, Buffer.from(bytes).toString('hex')).toBe(400);
      expect(errorOf(a)).toBe('request body is not valid UTF-8');
    }
    for (const s of ['\\ud800', '\\udc00', '\\ud800x', '\\ud800\\ud800', '\\udfff\\ud800']) {
      const a = await post('/api/v1/schedules', `{"name":"n","cron_expression":"0 * * * *","task_query":"q","task_context":{"k":"${s}"}}`);
      expect(a.status, s).toBe(400);
      expect(errorOf(a), s).toMatch(/surrogate/);
    }
    // A proper pair, escaped or not, is a character.
    const pair = await post('/api/v1/tasks', '{"query":"\\ud83d\\ude00 \u{1F600}","mode":"simple"}');
    expect(pair.status).toBe(200);
  });
});

describe('path and query parameters', () => {
  it('refuses NUL (%00) in a path or query parameter with 400 on every route', async () => {
    const h = Object.entries(auth) as Headers;
    for (const target of [
      '/api/v1/tasks?session_id=%00',
      '/api/v1/tasks?status=a%00',
      '/api/v1/sessions/%00',
      '/api/v1/sessions/a%00b/history',
      '/api/v1/sessions/%00/files',
      '/api/v1/sessions/%00/files/a.txt',
      `/api/v1/sessions/${fx.session}/files?path=%00`,
      '/api/v1/schedules/%00',
      '/api/v1/schedules?%00=1',
      '/api/v1/tasks/%00/events',
    ]) {
      const a = await send(request('GET', target, h), REQUEST_TIMEOUT_MS);
      expect(a.status, target).toBe(400);
      expect(JSON.parse(a.body.toString()).error, target).toMatch(/NUL/);
    }
  });
});

describe('what uWebSockets.js cannot answer (deploy/http-edge.md)', () => {
  const H = (n: number) => Array.from({ length: n }, (_, i) => `X-H${i}: v\r\n`).join('');
  const head = (s: string) => Buffer.from(s, 'latin1');
  const ctl = (b: number[]) => Buffer.concat([head('GET /health HTTP/1.1\r\nHost: a\r\nX-A: '), Buffer.from(b), head('\r\n\r\n')]);

  // Its parser treats these as an incomplete request: no byte comes back and the socket is
  // closed by the idle timeout (10 s, checked on a 4 s tick) — never left open.
  const silent: [string, Buffer][] = [
    ['HTTP/1.0 without Host', head('GET /health HTTP/1.0\r\n\r\n')],
    ['HTTP/1.0 with Host', head('GET /health HTTP/1.0\r\nHost: a\r\n\r\n')],
    ['HTTP/1.1 without Host', head('GET /health HTTP/1.1\r\n\r\n')],
    ['49 header lines', head(`GET /health HTTP/1.1\r\nHost: a\r\n${H(48)}\r\n`)],
    ['0x01 in a header value', ctl([0x01])],
    ['0xFF in a header name', Buffer.concat([head('GET /health HTTP/1.1\r\nHost: a\r\nX-'), Buffer.from([0xff]), head(': v\r\n\r\n')])],
    ['underscore in a header name', head('GET /health HTTP/1.1\r\nHost: a\r\nX_A: v\r\n\r\n')],
    ['header line without a colon', head('GET /health HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n')],
    ['GET *', head('GET * HTTP/1.1\r\nHost: a\r\n\r\n')],
    ['absolute-form target', head('GET http://a/health HTTP/1.1\r\nHost: a\r\n\r\n')],
    ['garbage request line', head('HELLO\r\n\r\n')],
    ['bare LF line ends', head('GET /health HTTP/1.1\nHost: a\n\n')],
  ];
  // These it closes at once, also without an answer. A method outside its nine has no route
  // (app.any covers only those), and the method is matched case-sensitively.
  const closedAtOnce: [string, Buffer | Buffer[]][] = [
    ['unknown method', head('FOO /health HTTP/1.1\r\nHost: a\r\n\r\n')],
    ['WebDAV method', head('PROPFIND /api/v1/tasks HTTP/1.1\r\nHost: a\r\n\r\n')],
    ['lower-case method', head('get /health HTTP/1.1\r\nHost: a\r\n\r\n')],
    [
      'Transfer-Encoding with Content-Length',
      head('POST /api/v1/tasks HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'),
    ],
    ['request head over 4 KB in two segments', [head('GET /health HTTP/1.1\r\nHost: a\r\n'), head(`X-Big: ${'a'.repeat(5000)}\r\n\r\n`)]],
  ];
  // And these, close to the edge, it answers.
  const answered: [string, Buffer][] = [
    ['48 header lines', head(`GET /health HTTP/1.1\r\nHost: a\r\n${H(47)}\r\n`)],
    ['0xFF in a header value', ctl([0xff])],
    ['tab in a header value', ctl([0x09])],
  ];

  it('closes the connection without an answer, within 16 s, instead of holding it', { timeout: 40_000 }, async () => {
    const all = await Promise.all([
      ...silent.map(async ([name, data]) => ({ name, kind: 'silent', a: await send(data, 16_000) })),
      ...closedAtOnce.map(async ([name, data]) => ({ name, kind: 'at once', a: await send(data, 16_000) })),
      ...answered.map(async ([name, data]) => ({ name, kind: 'answered', a: await send(data, 16_000) })),
    ]);
    for (const { name, kind, a } of all) {
      if (kind === 'answered') {
        expect(a.status, name).toBe(200);
        continue;
      }
      expect({ name, bytes: a.bytes, closed: a.closed }, name).toEqual({ name, bytes: 0, closed: true });
      if (kind === 'at once') expect(a.ms, name).toBeLessThan(2000);
      else expect(a.ms, name).toBeGreaterThan(5000); // the idle timeout, not an answer
    }
  });
});
