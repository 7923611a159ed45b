/**
 * Malformed input over every route the gateway registers (recorded from its uWebSockets.js
 * app, so a new route is fuzzed without editing this file): broken and wrongly typed JSON,
 * NUL characters, deep nesting, huge strings, bad UTF-8, path, query, method and header tricks.
 * The guard: no answer is 5xx and every request is answered, each within its own timeout.
 * Requests go over raw sockets (helpers/raw-http.ts). The cases pinned to one answer each, and
 * those the uWebSockets.js parser cannot answer at all: fuzz-pinned.test.ts.
 *
 * Random mutations are seeded: FUZZ_SEED=<n> replays a run (the seed is in every failure).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { useFuzzApp } from './helpers/fuzz-app.js';
import {
  BAD_UTF8,
  CONTENT_TYPES,
  HTTP_METHOD,
  ID_VALUES,
  METHODS,
  PATHS,
  QUERY_PARAMS,
  QUERY_VALUES,
  SYNTAX,
  VALUES,
  WILDCARD_VALUES,
  WS_HEADERS,
  baseBody,
} from './helpers/fuzz-values.js';
import { REQUEST_TIMEOUT_MS, request, send as sendRaw, type Answer, type Headers } from './helpers/raw-http.js';
import { rng } from './helpers/rng.js';
import type { RegisteredRoute } from './helpers/uws-routes.js';

const registered = vi.hoisted(() => [] as RegisteredRoute[]);

// Records every route the gateway registers; the app itself is untouched.
vi.mock('uWebSockets.js', async (importOriginal) => (await import('./helpers/uws-routes.js')).recordRoutes(await importOriginal(), registered));

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const rand = rng(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

const fz = useFuzzApp();
const send = (data: Buffer | Buffer[], timeoutMs: number, o: { head?: boolean } = {}): Promise<Answer> => sendRaw(fz.port, data, timeoutMs, o);

interface Case {
  name: string;
  data: Buffer;
  head?: boolean;
}

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

function fixtureId(pattern: string): string {
  if (pattern.startsWith('/api/v1/tasks/')) return fz.fx.task;
  if (pattern.startsWith('/api/v1/sessions/')) return fz.fx.session;
  if (pattern.startsWith('/api/v1/schedules/')) return fz.fx.schedule;
  if (pattern.startsWith('/api/v1/auth/api-keys/')) return fz.fx.apiKey;
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
  const withAuth = (h: Headers = []): Headers => [...Object.entries(fz.auth), ...h];
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
    const base = all[0] + (pattern === '/api/v1/stream/sse' || pattern === '/api/v1/stream/ws' ? `?workflow_id=${fz.fx.task}&` : '?');
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
  const key = fz.auth['X-API-Key'];
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
    cases.push({ name: `GET /api/v1/stream/sse [${label}]`, data: request('GET', `/api/v1/stream/sse?workflow_id=${fz.fx.task}`, h) });
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
