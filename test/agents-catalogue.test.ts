/** The agent catalogue loader (config/agents, AGENT_CATALOG_DIR) and the input validation, without a running service. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentFileError, createAgentCatalogue, loadAgentCatalogue, parseAgentFile, validateAgentInput, type AgentDefinition } from '../src/agents/index.js';
import { loadConfig } from '../src/config/index.js';
import { AppError, Code } from '../src/kernel/index.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'agents-'));
  roots.push(dir);
  for (const [name, content] of Object.entries(files)) {
    const path = join(dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, content);
  }
  return dir;
}

const agentYaml = (id: string, extra = '', props = '    query: { type: string }\n', required = '[query]') =>
  `id: ${id}\nname: Agent ${id}\ndescription: Does ${id}.\ncategory: web\ntool: web_search\ncost_per_call: 0.001\n${extra}input_schema:\n  required: ${required}\n  properties:\n${props}`;

function loadError(files: Record<string, string>): AgentFileError {
  try {
    loadAgentCatalogue(folder(files));
  } catch (err) {
    expect(err).toBeInstanceOf(AgentFileError);
    return err as AgentFileError;
  }
  throw new Error('expected the catalogue to be refused');
}

describe('loadAgentCatalogue', () => {
  it('reads every *.yaml of the folder, by id; skips dot and underscore files and other extensions', () => {
    const c = loadAgentCatalogue(
      folder({
        'b-two.yaml': agentYaml('b-two'),
        'a-one.yml': agentYaml('a-one'),
        '_draft.yaml': 'not: [valid',
        '.hidden.yaml': 'x',
        'README.md': '# agents',
      }),
    );
    expect(c.found).toBe(true);
    expect(c.list().map((a) => a.id)).toEqual(['a-one', 'b-two']);
    expect(c.get('a-one')).toMatchObject({
      name: 'Agent a-one',
      category: 'web',
      tool: 'web_search',
      costPerCall: 0.001,
      inputSchema: { required: ['query'] },
    });
    expect(c.has('b-two')).toBe(true);
    expect(c.has('nope')).toBe(false);
    expect(Object.isFrozen(c.get('a-one'))).toBe(true);
  });

  it('an unknown id is a 404 "Agent not found: <id>"', () => {
    const c = createAgentCatalogue([]);
    const err = (() => {
      try {
        c.get('ghost');
      } catch (e) {
        return e as AppError;
      }
    })();
    expect(err).toBeInstanceOf(AppError);
    expect(err!.code).toBe(Code.NotFound);
    expect(err!.message).toBe('Agent not found: ghost');
  });

  it('a folder that does not exist is an empty catalogue; a file in its place fails start-up', () => {
    const c = loadAgentCatalogue(join(tmpdir(), `no-such-agents-${process.pid}-${Date.now()}`));
    expect(c.found).toBe(false);
    expect(c.list()).toEqual([]);
    const dir = folder({ 'file.txt': 'x' });
    expect(() => loadAgentCatalogue(join(dir, 'file.txt'))).toThrow(/AGENT_CATALOG_DIR: .*is not a folder/);
  });

  it('a folder the operator named (AGENT_CATALOG_DIR set) that does not exist fails start-up naming the setting; the default missing does not', () => {
    const missing = join(tmpdir(), `no-such-agents-${process.pid}-${Date.now()}`);
    expect(() => loadAgentCatalogue(missing, { named: true })).toThrow(`invalid configuration: AGENT_CATALOG_DIR: ${missing} does not exist`);
    expect(loadAgentCatalogue(missing, { named: false }).list()).toEqual([]);
    expect(loadConfig({}).catalogs).toMatchObject({ agentsDir: './config/agents', agentsDirNamed: false });
    expect(loadConfig({ AGENT_CATALOG_DIR: missing }).catalogs).toMatchObject({ agentsDir: missing, agentsDirNamed: true });
    expect(loadConfig({ AGENT_CATALOG_DIR: '' }).catalogs.agentsDirNamed).toBe(false);
  });

  const bad: [string, string, string, string, RegExp][] = [
    ['not YAML', 'a.yaml', 'id: [a', '(file)', /not valid YAML/],
    ['a list instead of a mapping', 'a.yaml', '- a\n- b\n', '(file)', /must be a mapping/],
    ['a duplicate key', 'a.yaml', `${agentYaml('a')}id: a\n`, '(file)', /not valid YAML/],
    ['an unknown field', 'a.yaml', agentYaml('a', 'owner: me\n'), 'owner', /unknown field/],
    ['an id that is not the file name', 'a.yaml', agentYaml('b'), 'id', /does not match the file name/],
    ['an id with capitals', 'A.yaml', agentYaml('A'), 'id', /lowercase/],
    ['no name', 'a.yaml', agentYaml('a').replace('name: Agent a\n', ''), 'name', /is required/],
    ['no tool', 'a.yaml', agentYaml('a').replace('tool: web_search\n', ''), 'tool', /is required/],
    ['a category with spaces', 'a.yaml', agentYaml('a').replace('category: web', 'category: web stuff'), 'category', /lowercase letters/],
    ['a negative cost', 'a.yaml', agentYaml('a').replace('cost_per_call: 0.001', 'cost_per_call: -1'), 'cost_per_call', />= 0/],
    ['no cost', 'a.yaml', agentYaml('a').replace('cost_per_call: 0.001\n', ''), 'cost_per_call', /is required/],
    ['no input_schema', 'a.yaml', agentYaml('a').replace(/input_schema:[\s\S]*$/, ''), 'input_schema', /is required/],
    [
      'an unknown input_schema key',
      'a.yaml',
      agentYaml('a').replace('input_schema:\n', 'input_schema:\n  type: object\n'),
      'input_schema.type',
      /unknown field/,
    ],
    [
      'a required field that is no property',
      'a.yaml',
      agentYaml('a', '', '    query: { type: string }\n', '[query, other]'),
      'input_schema.required[1]',
      /not a property/,
    ],
    ['a required field listed twice', 'a.yaml', agentYaml('a', '', '    query: { type: string }\n', '[query, query]'), 'input_schema.required', /twice/],
    ['a property without a type', 'a.yaml', agentYaml('a', '', '    query: { description: q }\n'), 'input_schema.properties.query.type', /must be one of/],
    [
      'a property of an unknown type',
      'a.yaml',
      agentYaml('a', '', '    query: { type: text }\n'),
      'input_schema.properties.query.type',
      /string, integer, number, boolean, array, object/,
    ],
    [
      'an unknown property key',
      'a.yaml',
      agentYaml('a', '', '    query: { type: string, pattern: x }\n'),
      'input_schema.properties.query.pattern',
      /unknown key/,
    ],
    [
      'a default of the wrong type',
      'a.yaml',
      agentYaml('a', '', '    query: { type: string }\n    n: { type: integer, default: ten }\n'),
      'input_schema.properties.n.default',
      /expected type integer, got string/,
    ],
    [
      'a default outside the enum',
      'a.yaml',
      agentYaml('a', '', '    query: { type: string }\n    d: { type: string, enum: [a, b], default: c }\n'),
      'input_schema.properties.d.default',
      /not one of the allowed values/,
    ],
    [
      'a default below the minimum',
      'a.yaml',
      agentYaml('a', '', '    query: { type: string }\n    n: { type: integer, minimum: 1, default: 0 }\n'),
      'input_schema.properties.n.default',
      /below the minimum 1/,
    ],
    [
      'a default on a required field',
      'a.yaml',
      agentYaml('a', '', '    query: { type: string, default: x }\n'),
      'input_schema.properties.query.default',
      /required field has no default/,
    ],
    [
      'an enum value of the wrong type',
      'a.yaml',
      agentYaml('a', '', '    query: { type: string, enum: [a, 2] }\n'),
      'input_schema.properties.query.enum[1]',
      /not of type string/,
    ],
    [
      'minimum on a string',
      'a.yaml',
      agentYaml('a', '', '    query: { type: string, minimum: 1 }\n'),
      'input_schema.properties.query.minimum',
      /integer and number/,
    ],
    [
      'minimum above maximum',
      'a.yaml',
      agentYaml('a', '', '    query: { type: string }\n    n: { type: number, minimum: 5, maximum: 1 }\n'),
      'input_schema.properties.n.minimum',
      /above maximum/,
    ],
    [
      'maxItems on a string',
      'a.yaml',
      agentYaml('a', '', '    query: { type: string, maxItems: 3 }\n'),
      'input_schema.properties.query.maxItems',
      /array fields/,
    ],
    [
      'items with an unknown key',
      'a.yaml',
      agentYaml('a', '', '    query: { type: string }\n    l: { type: array, items: { type: string, format: uri } }\n'),
      'input_schema.properties.l.items.format',
      /unknown key/,
    ],
    [
      'a default list longer than maxItems',
      'a.yaml',
      agentYaml('a', '', '    query: { type: string }\n    l: { type: array, maxItems: 1, default: [x, y] }\n'),
      'input_schema.properties.l.default',
      /at most 1 allowed/,
    ],
  ];
  it.each(bad)('refuses %s, naming the file and the field', (_what, path, content, field, reason) => {
    const err = loadError({ 'fine.yaml': agentYaml('fine'), [path]: content });
    expect(err.file.endsWith(path)).toBe(true);
    expect(err.field).toBe(field);
    expect(err.reason).toMatch(reason);
    expect(err.message).toBe(`invalid configuration: AGENT_CATALOG_DIR: ${err.file}: ${field}: ${err.reason}`);
  });

  it('refuses two files with one id, naming both', () => {
    const a = parseAgentFile(agentYaml('x'), 'one/x.yaml');
    const b = parseAgentFile(agentYaml('x'), 'two/x.yaml');
    expect(() => createAgentCatalogue([a, b])).toThrow('two/x.yaml: id: x is also defined by one/x.yaml');
  });

  it('checkTools fails naming the agent and the tool when the tool is not registered or is dangerous', () => {
    const c = createAgentCatalogue([parseAgentFile(agentYaml('x'), 'x.yaml')]);
    expect(() => c.checkTools({ get: () => undefined })).toThrow('AGENT_CATALOG_DIR: agent x (x.yaml) runs tool web_search, which is not a registered tool');
    expect(() => c.checkTools({ get: () => ({ dangerous: true }) })).toThrow(/agent x \(x\.yaml\) runs tool web_search, which is dangerous/);
    expect(() => c.checkTools({ get: () => ({ dangerous: false }) })).not.toThrow();
  });
});

describe('validateAgentInput', () => {
  const agent: AgentDefinition = parseAgentFile(
    `id: kinds
name: Kinds
description: Every kind of field.
category: web
tool: web_search
cost_per_call: 0
input_schema:
  required: [keywords, ticker]
  properties:
    keywords: { type: array, items: { type: string }, maxItems: 3 }
    ticker: { type: string }
    device: { type: string, enum: [desktop, mobile, tablet], default: desktop }
    max_results: { type: integer, default: 10, minimum: 1, maximum: 100 }
    ratio: { type: number, minimum: 0, maximum: 1 }
    include: { type: boolean, default: true }
    extra: { type: object }
    devices: { type: array, items: { type: string, enum: [desktop, mobile] }, default: [desktop, mobile] }
`,
    'kinds.yaml',
    'kinds',
  );
  const problem = (input: unknown): string => {
    try {
      validateAgentInput(agent, input);
    } catch (err) {
      expect((err as AppError).code).toBe(Code.InvalidArgument);
      return (err as Error).message;
    }
    throw new Error('expected a refusal');
  };

  it('fills the defaults and keeps what was given', () => {
    const out = validateAgentInput(agent, { keywords: ['shoes'], ticker: 'ACME', max_results: 5, extra: { a: 1 }, ratio: 0.5 });
    expect(out).toEqual({
      keywords: ['shoes'],
      ticker: 'ACME',
      max_results: 5,
      extra: { a: 1 },
      ratio: 0.5,
      device: 'desktop',
      include: true,
      devices: ['desktop', 'mobile'],
    });
    // A default is a copy: filling it twice does not share the list.
    const a = validateAgentInput(agent, { keywords: [], ticker: 'X' });
    (a.devices as string[]).push('mobile');
    expect(validateAgentInput(agent, { keywords: [], ticker: 'X' }).devices).toEqual(['desktop', 'mobile']);
  });

  it('an optional field given as null counts as absent (its default applies)', () => {
    expect(validateAgentInput(agent, { keywords: ['a'], ticker: 'X', device: null, ratio: null })).toMatchObject({ device: 'desktop' });
    expect(validateAgentInput(agent, { keywords: ['a'], ticker: 'X', ratio: null })).not.toHaveProperty('ratio');
  });

  it.each([
    [{ ticker: 'X' }, 'input validation failed: missing required field: keywords'],
    [{ keywords: ['a'], ticker: null }, 'input validation failed: missing required field: ticker'],
    [{}, 'input validation failed: missing required field: keywords; missing required field: ticker'],
    [{ keywords: ['a'], ticker: 'X', country: 'us' }, 'input validation failed: unknown field: country (not defined in agent schema)'],
    [{ keywords: 'a', ticker: 'X' }, 'input validation failed: field keywords: expected type array, got string'],
    [{ keywords: ['a'], ticker: 7 }, 'input validation failed: field ticker: expected type string, got integer'],
    [{ keywords: ['a'], ticker: 'X', max_results: 2.5 }, 'input validation failed: field max_results: expected type integer, got number'],
    [{ keywords: ['a'], ticker: 'X', max_results: '5' }, 'input validation failed: field max_results: expected type integer, got string'],
    [{ keywords: ['a'], ticker: 'X', ratio: 'half' }, 'input validation failed: field ratio: expected type number, got string'],
    [{ keywords: ['a'], ticker: 'X', include: 'yes' }, 'input validation failed: field include: expected type boolean, got string'],
    [{ keywords: ['a'], ticker: 'X', extra: [1] }, 'input validation failed: field extra: expected type object, got array'],
    [
      { keywords: ['a'], ticker: 'X', device: 'phone' },
      'input validation failed: field device: value "phone" is not one of the allowed values: "desktop", "mobile", "tablet"',
    ],
    [{ keywords: ['a'], ticker: 'X', max_results: 0 }, 'input validation failed: field max_results: 0 is below the minimum 1'],
    [{ keywords: ['a'], ticker: 'X', max_results: 101 }, 'input validation failed: field max_results: 101 is above the maximum 100'],
    [{ keywords: ['a', 'b', 'c', 'd'], ticker: 'X' }, 'input validation failed: field keywords: 4 items, at most 3 allowed'],
    [{ keywords: ['a', 2], ticker: 'X' }, 'input validation failed: field keywords[1]: expected type string, got integer'],
    [
      { keywords: ['a'], ticker: 'X', devices: ['tv'] },
      'input validation failed: field devices[0]: value "tv" is not one of the allowed values: "desktop", "mobile"',
    ],
    [
      { ticker: 'X', country: 'us', device: 'phone' },
      'input validation failed: missing required field: keywords; unknown field: country (not defined in agent schema); field device: value "phone" is not one of the allowed values: "desktop", "mobile", "tablet"',
    ],
  ])('refuses %j: %s', (input, message) => {
    expect(problem(input)).toBe(message);
  });

  it.each([
    [[1], 'input validation failed: input must be an object, got array'],
    ['x', 'input validation failed: input must be an object, got string'],
    [null, 'input validation failed: input must be an object, got null'],
  ])('input %j that is not an object: %s', (input, message) => {
    expect(problem(input)).toBe(message);
  });
});
