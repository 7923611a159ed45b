import { describe, expect, it } from 'vitest';
import type { Role } from '../config/index.js';
import { edgePoolSplit } from './edge-pool.js';

const roles = (...r: Role[]) => new Set<Role>(r);

describe('edgePoolSplit', () => {
  it('gives the edge 30% (at least 2) of a server pool when the process also runs workflows; the total stays the setting', () => {
    expect(edgePoolSplit(roles('gateway', 'orchestrator', 'worker', 'archiver'), 10, false)).toEqual({ edge: 3, rest: 7 });
    expect(edgePoolSplit(roles('orchestrator', 'archiver'), 4, false)).toEqual({ edge: 2, rest: 2 });
    expect(edgePoolSplit(roles('gateway', 'worker'), 50, false)).toEqual({ edge: 15, rest: 35 });
  });

  it('keeps one pool: embedded PGlite, one side only, or fewer than 4 connections', () => {
    expect(edgePoolSplit(roles('gateway', 'orchestrator', 'worker', 'archiver'), 1, true)).toBeUndefined();
    expect(edgePoolSplit(roles('gateway', 'orchestrator', 'worker', 'archiver'), 10, true)).toBeUndefined();
    expect(edgePoolSplit(roles('gateway', 'orchestrator'), 10, false)).toBeUndefined();
    expect(edgePoolSplit(roles('worker', 'archiver', 'scheduler'), 10, false)).toBeUndefined();
    expect(edgePoolSplit(roles('gateway', 'worker'), 3, false)).toBeUndefined();
  });
});
