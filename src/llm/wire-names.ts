/**
 * Tool names as OpenAI-compatible APIs take them. A function name there must match
 * /^[a-zA-Z0-9_-]{1,64}$/, while tools from elsewhere are named `mcp.<server>.<tool>` and
 * `openapi.<name>.<operationId>`. One request's names (the tools offered and the calls in its
 * history) are mapped one to one: a valid name stays as it is; another has its other
 * characters replaced by `_`, is cut with a hash of the whole name when too long, and takes a
 * numeric suffix if that collides. The model's calls are mapped back; a name the model made up
 * passes through unchanged (the agent loop tells it that there is no such tool).
 */
import { createHash } from 'node:crypto';

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX = 64;

export interface WireNames {
  toWire(name: string): string;
  fromWire(wire: string): string;
}

function candidate(name: string): string {
  const safe = name.replace(/[^a-zA-Z0-9_-]/g, '_') || '_';
  if (safe.length <= MAX) return safe;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${safe.slice(0, MAX - 9)}_${hash}`;
}

/** The mapping of one request's tool names (every name it uses, offered or in its history). */
export function wireNames(names: Iterable<string>): WireNames {
  const all = [...new Set(names)];
  const out = new Map<string, string>();
  const back = new Map<string, string>();
  // Valid names first: they keep their own spelling whatever else the request holds.
  for (const n of all)
    if (VALID.test(n)) {
      out.set(n, n);
      back.set(n, n);
    }
  for (const n of all) {
    if (out.has(n)) continue;
    const base = candidate(n);
    let wire = base;
    for (let i = 2; back.has(wire); i++) wire = `${base.slice(0, MAX - String(i).length - 1)}_${i}`;
    out.set(n, wire);
    back.set(wire, n);
  }
  return {
    toWire: (name) => out.get(name) ?? candidate(name),
    fromWire: (wire) => back.get(wire) ?? wire,
  };
}
