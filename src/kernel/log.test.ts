import { describe, expect, it } from 'vitest';
import { formatPretty, resolveLogFormat } from './log.js';

describe('log format', () => {
  it('auto is pretty at a terminal and JSON elsewhere; json and pretty are what they say', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });

  it('pretty: local time, level, message, then key=value pairs (strings quoted only when needed)', () => {
    const time = new Date(2025, 0, 2, 3, 4, 5, 67).toISOString();
    const line = JSON.stringify({
      level: 30,
      time,
      pid: 1,
      name: 'taskorch',
      url: 'nats://127.0.0.1:4222',
      port: 8080,
      note: 'two words',
      ok: true,
      roles: ['a', 'b'],
      msg: 'ready',
    });
    expect(formatPretty(line)).toBe('03:04:05.067 INFO  ready url=nats://127.0.0.1:4222 port=8080 note="two words" ok=true roles=["a","b"]\n');
  });

  it('pretty: an error shows its message inline and its stack below; colour only when asked', () => {
    const line = JSON.stringify({
      level: 50,
      time: Date.now(),
      msg: 'shutdown step failed',
      err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x (y.js:1:1)' },
    });
    const out = formatPretty(line);
    expect(out).toMatch(/^\d\d:\d\d:\d\d\.\d{3} ERROR shutdown step failed err=boom\n {4}Error: boom\n {8}at x \(y\.js:1:1\)\n$/);
    expect(out).not.toContain('\x1b[');
    expect(formatPretty(line, true)).toContain('\x1b[31mERROR\x1b[0m');
  });

  it('passes a line that is not JSON through', () => {
    expect(formatPretty('plain text')).toBe('plain text\n');
  });
});
