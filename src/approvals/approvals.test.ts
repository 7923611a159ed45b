import { describe, expect, it } from 'vitest';
import { AppError } from '../kernel/index.js';
import { outcomeOf, parseModifiedAction, refusalText } from './model.js';
import { hasPolicies, needsApproval } from './policy.js';

describe('modified_action', () => {
  it('takes an object or a JSON string of one; absent, null and empty are none', () => {
    expect(parseModifiedAction({ a: 1 })).toEqual({ a: 1 });
    expect(parseModifiedAction('{"arguments":{"x":2}}')).toEqual({ arguments: { x: 2 } });
    for (const v of [undefined, null, '']) expect(parseModifiedAction(v)).toBeUndefined();
  });
  it.each([['[1]'], ['nope'], [[1]], [3], [true], ['"str"']])('refuses %j with a 400 naming the field', (v) => {
    expect(() => parseModifiedAction(v)).toThrow(AppError);
    expect(() => parseModifiedAction(v)).toThrow(/modified_action must be a JSON object/);
  });
});

describe('how the workflow reads a decision', () => {
  it('a timeout is a refusal with reason timeout', () => {
    const o = outcomeOf({ decision: { timed_out: true }, timedOut: true, decidedBy: 'timeout' });
    expect(o).toEqual({ approved: false, feedback: '', approved_by: 'timeout', reason: 'timeout' });
    expect(refusalText(o)).toBe('timeout');
  });
  it('a person: approved only when approved is true; feedback and modified_action kept', () => {
    expect(outcomeOf({ decision: { approved: true, feedback: 'ok', modified_action: { x: 1 }, approved_by: 'u' }, timedOut: false })).toEqual({
      approved: true,
      feedback: 'ok',
      modified_action: { x: 1 },
      approved_by: 'u',
    });
    expect(outcomeOf({ decision: { approved: 'true' }, timedOut: false, decidedBy: 'v' })).toEqual({ approved: false, feedback: '', approved_by: 'v' });
    expect(refusalText({ approved: false, feedback: '  ', approved_by: 'x' })).toBe('no reason given');
  });
});

describe('tool policies', () => {
  const p = { tools: ['bash'], roles: { developer: ['file_write'] } };
  it('hold a tool for every role, or for one role', () => {
    expect(needsApproval(p, 'generalist', 'bash')).toBe(true);
    expect(needsApproval({ tools: ['mcp.github.*'], roles: { developer: ['openapi.pets.delete_pet'] } }, 'developer', 'mcp.github.create_issue')).toBe(true);
    expect(needsApproval({ tools: ['mcp.github.*'], roles: {} }, 'generalist', 'mcp.githubx.y')).toBe(false);
    expect(needsApproval({ tools: [], roles: { developer: ['openapi.pets.delete_pet'] } }, 'developer', 'openapi.pets.delete_pet')).toBe(true);
    expect(needsApproval({ tools: [], roles: { developer: ['openapi.pets.delete_pet'] } }, 'generalist', 'openapi.pets.delete_pet')).toBe(false);
    expect(needsApproval(p, 'developer', 'file_write')).toBe(true);
    expect(needsApproval(p, 'generalist', 'file_write')).toBe(false);
    expect(needsApproval(p, 'constructor', 'file_write')).toBe(false);
    expect(needsApproval(undefined, 'developer', 'bash')).toBe(false);
  });
  it('none configured: nothing to look at', () => {
    expect(hasPolicies({ tools: [], roles: { developer: [] } })).toBe(false);
    expect(hasPolicies(p)).toBe(true);
  });
});
