import { describe, expect, it } from 'vitest';
import { Code, ConnectError } from '@connectrpc/connect';
import { httpStatusOf, toAppError } from './errors.js';

describe('toAppError: a database out of reach is a 503 to retry, not an internal error', () => {
  it('maps PostgreSQL shutdown states, connection exceptions and lost sockets to Unavailable with Retry-After', () => {
    const cases = [
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' }),
    ];
    for (const err of cases) {
      const app = toAppError(err);
      expect(app.code, err.message).toBe(Code.Unavailable);
      expect(app.retryable).toBe(true);
      expect(app.retryAfter).toBeGreaterThan(0);
      expect(httpStatusOf(app.code)).toBe(503);
      expect(app.message).not.toContain('127.0.0.1');
    }
  });

  it('keeps a statement that is at fault an internal error', () => {
    const app = toAppError(Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }));
    expect(app.code).toBe(Code.Internal);
    expect(app.retryable).toBe(false);
  });

  it('keeps a Connect error from an answering peer as it came', () => {
    expect(toAppError(new ConnectError('no such task', Code.NotFound)).code).toBe(Code.NotFound);
  });
});
