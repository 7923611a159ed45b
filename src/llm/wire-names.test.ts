import { describe, expect, it } from 'vitest';
import { wireNames } from './wire-names.js';

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;

describe('wireNames', () => {
  it('keeps valid names and maps the others one to one, valid and reversible', () => {
    const long = `mcp.${'s'.repeat(40)}.${'t'.repeat(60)}`;
    const names = ['calculator', 'mcp.a.b', 'mcp_a_b', 'mcp-a.b', 'mcp:a.b', long, `${long}x`];
    const w = wireNames(names);
    const wires = names.map((n) => w.toWire(n));
    expect(w.toWire('calculator')).toBe('calculator');
    expect(w.toWire('mcp_a_b')).toBe('mcp_a_b'); // a valid name keeps its spelling, the dotted one moves aside
    for (const x of wires) expect(x).toMatch(VALID);
    expect(new Set(wires).size).toBe(names.length);
    for (const n of names) expect(w.fromWire(w.toWire(n))).toBe(n);
    expect(w.fromWire('made_up')).toBe('made_up');
  });
});
