/**
 * Malformed input pinned to one answer each: JSON bodies refused with 400 before any decoder
 * (NUL, deep nesting, bad UTF-8, unpaired surrogates), NUL in path and query parameters, and
 * the requests the uWebSockets.js parser cannot answer at all, pinned to the behaviour
 * deploy/http-edge.md documents. The randomised sweep over every route: fuzz.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { useFuzzApp } from './helpers/fuzz-app.js';
import { BAD_UTF8, nested } from './helpers/fuzz-values.js';
import { REQUEST_TIMEOUT_MS, request, send as sendRaw, type Answer, type Headers } from './helpers/raw-http.js';

const fz = useFuzzApp();
const send = (data: Buffer | Buffer[], timeoutMs: number): Promise<Answer> => sendRaw(fz.port, data, timeoutMs);

describe('JSON bodies: refused with 400 before any decoder', () => {
  const post = (path: string, body: Buffer | string) =>
    send(request('POST', path, [...Object.entries(fz.auth), ['Content-Type', 'application/json']], body), REQUEST_TIMEOUT_MS);
  const put = (path: string, body: string) =>
    send(request('PUT', path, [...Object.entries(fz.auth), ['Content-Type', 'application/json']], body), REQUEST_TIMEOUT_MS);
  const errorOf = (a: Answer) => JSON.parse(a.body.toString('utf8')).error as string;

  it('NUL (\\u0000) in a string or key, on every kind of route', async () => {
    const cases: [string, string, 'post' | 'put' | 'patch'][] = [
      ['/api/v1/tasks', '{"query":"a\\u0000b"}', 'post'],
      ['/api/v1/tasks/stream', '{"query":"q","context":{"k":"\\u0000"}}', 'post'],
      ['/api/v1/tasks', '{"query":"q","context":{"k\\u0000":1}}', 'post'],
      ['/api/v1/auth/register', `{"email":"a\\u0000@example.com","password":"password123"}`, 'post'],
      ['/api/v1/auth/login', '{"email":"x@example.com","password":"\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000"}', 'post'],
      ['/api/v1/schedules', '{"name":"\\u0000","cron_expression":"0 * * * *","task_query":"q"}', 'post'],
      [`/api/v1/schedules/${fz.fx.schedule}/pause`, '{"reason":"\\u0000"}', 'post'],
      [`/api/v1/schedules/${fz.fx.schedule}`, '{"description":"\\u0000"}', 'put'],
      [`/api/v1/sessions/${fz.fx.session}`, '{"title":"\\u0000"}', 'patch'],
    ];
    for (const [path, body, m] of cases) {
      const a = await send(request(m.toUpperCase(), path, [...Object.entries(fz.auth), ['Content-Type', 'application/json']], body), REQUEST_TIMEOUT_MS);
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
        `/api/v1/schedules/${fz.fx.schedule}`,
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
    const h = Object.entries(fz.auth) as Headers;
    for (const target of [
      '/api/v1/tasks?session_id=%00',
      '/api/v1/tasks?status=a%00',
      '/api/v1/sessions/%00',
      '/api/v1/sessions/a%00b/history',
      '/api/v1/sessions/%00/files',
      '/api/v1/sessions/%00/files/a.txt',
      `/api/v1/sessions/${fz.fx.session}/files?path=%00`,
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
