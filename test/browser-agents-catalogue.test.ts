/**
 * The browser agents' catalogue files agree with their tools (an agent IS its tool: same
 * properties, required fields, defaults, enums, bounds and cost), and the tools are registered
 * among the built-in tools.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseAgentFile } from '../src/agents/catalogue-parse.js';
import { loadConfig } from '../src/config/index.js';
import { builtinTools } from '../src/tools/index.js';
import { Workspace } from '../src/workspace/index.js';

const AGENTS = { 'browser-screenshot': 'web', 'lp-visual-analyze': 'ads_research', 'lp-batch-analyze': 'ads_research' } as const;
const tools = builtinTools(loadConfig({}).tools, {
  workspace: new Workspace(tmpdir()),
  model: async () => ({ text: '', model: 'm', provider: 'p', tokens: 0 }),
});

describe('browser agents in the catalogue', () => {
  it.each(Object.entries(AGENTS))('%s: the catalogue file matches its tool', (id, category) => {
    const def = parseAgentFile(readFileSync(new URL(`../config/agents/${id}.yaml`, import.meta.url)), `${id}.yaml`, id);
    expect(def.category).toBe(category);
    const tool = tools.find((t) => t.name === def.tool);
    expect(tool, `tool ${def.tool}`).toBeDefined();
    expect(def.costPerCall).toBe(tool!.costPerUse);
    const props = tool!.parameters.properties;
    expect(Object.keys(def.inputSchema.properties).sort()).toEqual(Object.keys(props).sort());
    expect([...def.inputSchema.required].sort()).toEqual([...(tool!.parameters.required ?? [])].sort());
    expect(tool!.parameters.additionalProperties).toBe(false);
    for (const [name, p] of Object.entries(def.inputSchema.properties)) {
      const t = props[name]!;
      expect(p.type, name).toBe(t.type);
      expect(p.default, `${name} default`).toEqual(t.default);
      expect(p.enum, `${name} enum`).toEqual(t.enum);
      expect(p.minimum, `${name} minimum`).toEqual(t.minimum);
      expect(p.maximum, `${name} maximum`).toEqual(t.maximum);
      expect(p.maxItems, `${name} maxItems`).toEqual(t.maxItems);
      expect(p.items?.type, `${name} items`).toEqual((t.items as { type?: string } | undefined)?.type);
    }
  });
});
