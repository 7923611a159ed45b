/**
 * The malformed inputs the fuzz test combines: a body each JSON route accepts, JSON values and
 * syntax errors, bad UTF-8, content types, query, id, wildcard and path tricks, methods.
 */
import { randomUUID } from 'node:crypto';
import type { Headers } from './raw-http.js';

/** A body each JSON route accepts (or nearly), so that mutating one field reaches deep code. */
export function baseBody(method: string, pattern: string): Record<string, unknown> {
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

export const nested = (n: number, kind: 'array' | 'object') => (kind === 'array' ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n));

/** JSON text fragments for one field (some are not representable as JS values). */
export const VALUES = [
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

export const SYNTAX = [
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

export const BAD_UTF8 = [[0xff], [0xfe], [0x80], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xf4, 0x90, 0x80, 0x80]];

export const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=utf-16',
  'multipart/form-data; boundary=x',
  'application/json\u00ff',
];

export const QUERY_PARAMS: Record<string, string[]> = {
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
export const QUERY_VALUES = [
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
export const ID_VALUES = [
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
export const WILDCARD_VALUES = [
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
export const PATHS = [
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
export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT'];
export const WS_HEADERS: Headers = [
  ['Upgrade', 'websocket'],
  ['Connection', 'Upgrade'],
  ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='],
  ['Sec-WebSocket-Version', '13'],
];

export const HTTP_METHOD: Record<string, string> = {
  get: 'GET',
  post: 'POST',
  put: 'PUT',
  patch: 'PATCH',
  del: 'DELETE',
  ws: 'GET',
  options: 'OPTIONS',
  any: 'GET',
};
