/**
 * The strict reader of one agent file of the catalogue (config/agents/<id>.yaml,
 * AGENT_CATALOG_DIR). One YAML mapping per file:
 *
 *   id: serp-ads                 # the file name without .yaml; lowercase letters, digits, '-'
 *   name: Search Ads
 *   description: What it returns and from where.
 *   category: ads_research       # lowercase letters, digits, '_'
 *   tool: serp_ads               # the registered tool the agent runs (checked at start-up)
 *   cost_per_call: 0.015         # estimated USD per call, >= 0
 *   input_schema:
 *     required: [keywords]       # each one a property below; a required field has no default
 *     properties:
 *       keywords: { type: string, description: Search keywords }
 *       device: { type: string, enum: [desktop, mobile, tablet], default: desktop }
 *       max_results: { type: integer, default: 10, minimum: 1, maximum: 100 }
 *       devices: { type: array, items: { type: string }, default: [desktop, mobile], maxItems: 5 }
 *
 * Property keys: type (string, integer, number, boolean, array, object; required),
 * description, default, enum, minimum and maximum (integer and number), items ({type,
 * description, enum}: what every element must be) and maxItems (array). A default and every
 * enum value must themselves pass the property's rules. Unknown keys, wrong types and
 * duplicate keys are refused with an error naming the file and the field.
 */
import { parseAllDocuments } from 'yaml';
import { ConfigError } from '../config/index.js';

export const AGENT_ID_RE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const CATEGORY_RE = /^[a-z][a-z0-9_]{0,63}$/;
const TOOL_RE = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;
const FIELD_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const MAX_AGENT_FILE_BYTES = 64 * 1024;

export const AGENT_PROPERTY_TYPES = ['string', 'integer', 'number', 'boolean', 'array', 'object'] as const;
export type AgentPropertyType = (typeof AGENT_PROPERTY_TYPES)[number];

/** What every element of an array property must be. */
export interface AgentItems {
  type?: AgentPropertyType;
  description?: string;
  enum?: readonly (string | number | boolean)[];
}

/** One field of an agent's input. */
export interface AgentProperty {
  type: AgentPropertyType;
  description?: string;
  default?: unknown;
  enum?: readonly (string | number | boolean)[];
  minimum?: number;
  maximum?: number;
  items?: AgentItems;
  maxItems?: number;
}

export interface AgentInputSchema {
  required: readonly string[];
  properties: Readonly<Record<string, AgentProperty>>;
}

/** One agent of the catalogue. */
export interface AgentDefinition {
  id: string;
  name: string;
  description: string;
  category: string;
  /** The registered tool the agent runs with its (validated, defaulted) input as arguments. */
  tool: string;
  /** Estimated USD per call. */
  costPerCall: number;
  inputSchema: AgentInputSchema;
  /** The file it was read from. */
  file: string;
}

/** An agent file that cannot be used: names the file and the field. Fails start-up. */
export class AgentFileError extends ConfigError {
  override name = 'AgentFileError';
  constructor(
    readonly file: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super('AGENT_CATALOG_DIR', `${file}: ${field}: ${reason}`);
  }
}

const FIELDS = ['id', 'name', 'description', 'category', 'tool', 'cost_per_call', 'input_schema'] as const;
const PROPERTY_KEYS = ['type', 'description', 'default', 'enum', 'minimum', 'maximum', 'items', 'maxItems'] as const;
const ITEMS_KEYS = ['type', 'description', 'enum'] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JSON type of a value as the validation messages name it. */
export function jsonTypeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Whether `v` is of the property type `t` (an integer is also a number). */
export function hasType(v: unknown, t: AgentPropertyType): boolean {
  switch (t) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return isObj(v);
  }
}

const isType = (v: unknown): v is AgentPropertyType => typeof v === 'string' && (AGENT_PROPERTY_TYPES as readonly string[]).includes(v);

/**
 * The problems of `value` against a property (or an array's items), each `field <name>: ...`:
 * the messages the input validation reports (agent-input.ts), also used here for defaults.
 */
export function valueProblems(field: string, value: unknown, p: AgentProperty | AgentItems): string[] {
  if (p.type && !hasType(value, p.type)) return [`field ${field}: expected type ${p.type}, got ${jsonTypeOf(value)}`];
  const out: string[] = [];
  if (p.enum && !p.enum.some((e) => e === value)) {
    out.push(`field ${field}: value ${JSON.stringify(value)} is not one of the allowed values: ${p.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  }
  if ('minimum' in p && p.minimum !== undefined && typeof value === 'number' && value < p.minimum)
    out.push(`field ${field}: ${value} is below the minimum ${p.minimum}`);
  if ('maximum' in p && p.maximum !== undefined && typeof value === 'number' && value > p.maximum)
    out.push(`field ${field}: ${value} is above the maximum ${p.maximum}`);
  if (Array.isArray(value)) {
    if ('maxItems' in p && p.maxItems !== undefined && value.length > p.maxItems)
      out.push(`field ${field}: ${value.length} items, at most ${p.maxItems} allowed`);
    const items = 'items' in p ? p.items : undefined;
    if (items) value.forEach((el, i) => out.push(...valueProblems(`${field}[${i}]`, el, items)));
  }
  return out;
}

/** Reads one agent file strictly; `expectId` is its file name without `.yaml`. */
export function parseAgentFile(content: Uint8Array | string, file: string, expectId?: string): AgentDefinition {
  const fail = (field: string, why: string): never => {
    throw new AgentFileError(file, field, why);
  };
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  if (bytes.byteLength > MAX_AGENT_FILE_BYTES) fail('(file)', `larger than ${MAX_AGENT_FILE_BYTES} bytes`);
  let text = '';
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    fail('(file)', 'not valid UTF-8');
  }
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: true });
  if (!Array.isArray(docs) || docs.length !== 1)
    return fail('(file)', 'must be one YAML mapping (id, name, description, category, tool, cost_per_call, input_schema)');
  const problem = docs[0].errors[0] ?? docs[0].warnings[0];
  if (problem) return fail('(file)', `not valid YAML: ${problem.message.split('\n')[0].replace(/:$/, '')}`);
  let doc: unknown;
  try {
    doc = docs[0].toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    return fail('(file)', `not valid YAML: ${(err as Error).message}`);
  }
  if (!isObj(doc)) return fail('(file)', `must be a mapping, got ${jsonTypeOf(doc)}`);
  for (const k of Object.keys(doc)) if (!(FIELDS as readonly string[]).includes(k)) fail(k, `unknown field (allowed: ${FIELDS.join(', ')})`);

  const str = (key: string, re?: RegExp, what?: string): string => {
    const v = doc[key];
    if (v === undefined || v === null) return fail(key, 'is required');
    if (typeof v !== 'string') return fail(key, `must be a string, got ${jsonTypeOf(v)}`);
    if (v.trim() === '') return fail(key, 'must not be empty');
    if (re && !re.test(v)) return fail(key, `${JSON.stringify(v)} must be ${what}`);
    return v;
  };
  const id = str('id', AGENT_ID_RE, "lowercase letters and digits joined by '-'");
  if (expectId !== undefined && id !== expectId) fail('id', `${JSON.stringify(id)} does not match the file name (expected ${JSON.stringify(expectId)})`);
  const name = str('name');
  const description = str('description');
  if (description.length > 2000) fail('description', 'must be at most 2000 characters');
  const category = str('category', CATEGORY_RE, "lowercase letters, digits and '_' (e.g. ads_research, financial, web)");
  const tool = str('tool', TOOL_RE, 'a tool name');
  const cost = doc.cost_per_call;
  if (cost === undefined || cost === null) fail('cost_per_call', 'is required (estimated USD per call; 0 when free)');
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0) fail('cost_per_call', `must be a number >= 0, got ${JSON.stringify(cost)}`);

  return Object.freeze({
    id,
    name,
    description,
    category,
    tool,
    costPerCall: cost as number,
    inputSchema: inputSchemaOf(doc.input_schema, fail),
    file,
  });
}

function inputSchemaOf(raw: unknown, fail: (field: string, why: string) => never): AgentInputSchema {
  if (raw === undefined || raw === null) return fail('input_schema', 'is required (required and properties)');
  if (!isObj(raw)) return fail('input_schema', `must be a mapping, got ${jsonTypeOf(raw)}`);
  for (const k of Object.keys(raw)) if (k !== 'required' && k !== 'properties') fail(`input_schema.${k}`, 'unknown field (allowed: required, properties)');
  const props = raw.properties ?? {};
  if (!isObj(props)) return fail('input_schema.properties', `must be a mapping of field names, got ${jsonTypeOf(props)}`);
  const properties: Record<string, AgentProperty> = {};
  for (const [name, p] of Object.entries(props)) {
    if (!FIELD_RE.test(name)) fail(`input_schema.properties.${name}`, 'a field name is letters, digits and _');
    properties[name] = propertyOf(`input_schema.properties.${name}`, name, p, fail);
  }
  const req = raw.required ?? [];
  if (!Array.isArray(req)) return fail('input_schema.required', `must be a list of field names, got ${jsonTypeOf(req)}`);
  const required = req.map((r, i) => {
    if (typeof r !== 'string') return fail(`input_schema.required[${i}]`, `must be a field name, got ${jsonTypeOf(r)}`);
    if (!Object.hasOwn(properties, r)) return fail(`input_schema.required[${i}]`, `${r} is not a property`);
    if (properties[r].default !== undefined) fail(`input_schema.properties.${r}.default`, 'a required field has no default (the caller must give it)');
    return r;
  });
  const dup = required.find((r, i) => required.indexOf(r) !== i);
  if (dup) fail('input_schema.required', `lists ${dup} twice`);
  return Object.freeze({ required: Object.freeze(required), properties: Object.freeze(properties) });
}

function enumOf(at: string, v: unknown, type: AgentPropertyType | undefined, fail: (field: string, why: string) => never): (string | number | boolean)[] {
  if (!Array.isArray(v) || v.length === 0) return fail(at, 'must be a non-empty list of values');
  return v.map((e, i) => {
    if (typeof e !== 'string' && typeof e !== 'number' && typeof e !== 'boolean')
      return fail(`${at}[${i}]`, `must be a string, number or boolean, got ${jsonTypeOf(e)}`);
    if (type && !hasType(e, type)) fail(`${at}[${i}]`, `${JSON.stringify(e)} is not of type ${type}`);
    return e;
  });
}

function propertyOf(at: string, name: string, raw: unknown, fail: (field: string, why: string) => never): AgentProperty {
  if (!isObj(raw)) return fail(at, `must be a mapping with a type, got ${jsonTypeOf(raw)}`);
  for (const k of Object.keys(raw))
    if (!(PROPERTY_KEYS as readonly string[]).includes(k)) fail(`${at}.${k}`, `unknown key (allowed: ${PROPERTY_KEYS.join(', ')})`);
  if (!isType(raw.type)) return fail(`${at}.type`, `must be one of ${AGENT_PROPERTY_TYPES.join(', ')}, got ${JSON.stringify(raw.type)}`);
  const type = raw.type;
  const p: AgentProperty = { type };
  if (raw.description !== undefined) {
    if (typeof raw.description !== 'string') fail(`${at}.description`, 'must be a string');
    p.description = raw.description as string;
  }
  if (raw.enum !== undefined) p.enum = Object.freeze(enumOf(`${at}.enum`, raw.enum, type, fail));
  for (const k of ['minimum', 'maximum'] as const) {
    if (raw[k] === undefined) continue;
    if (type !== 'integer' && type !== 'number') fail(`${at}.${k}`, `applies to integer and number fields, not ${type}`);
    if (typeof raw[k] !== 'number' || !Number.isFinite(raw[k])) fail(`${at}.${k}`, `must be a number, got ${JSON.stringify(raw[k])}`);
    p[k] = raw[k] as number;
  }
  if (p.minimum !== undefined && p.maximum !== undefined && p.minimum > p.maximum) fail(`${at}.minimum`, `${p.minimum} is above maximum ${p.maximum}`);
  if (raw.maxItems !== undefined) {
    if (type !== 'array') fail(`${at}.maxItems`, `applies to array fields, not ${type}`);
    if (typeof raw.maxItems !== 'number' || !Number.isInteger(raw.maxItems) || raw.maxItems < 0) fail(`${at}.maxItems`, 'must be an integer >= 0');
    p.maxItems = raw.maxItems as number;
  }
  if (raw.items !== undefined) {
    if (type !== 'array') fail(`${at}.items`, `applies to array fields, not ${type}`);
    const it = raw.items;
    if (!isObj(it)) return fail(`${at}.items`, `must be a mapping such as { type: string }, got ${jsonTypeOf(it)}`);
    for (const k of Object.keys(it))
      if (!(ITEMS_KEYS as readonly string[]).includes(k)) fail(`${at}.items.${k}`, `unknown key (allowed: ${ITEMS_KEYS.join(', ')})`);
    const items: AgentItems = {};
    if (it.type !== undefined) {
      if (!isType(it.type)) return fail(`${at}.items.type`, `must be one of ${AGENT_PROPERTY_TYPES.join(', ')}, got ${JSON.stringify(it.type)}`);
      items.type = it.type;
    }
    if (it.description !== undefined) {
      if (typeof it.description !== 'string') fail(`${at}.items.description`, 'must be a string');
      items.description = it.description as string;
    }
    if (it.enum !== undefined) items.enum = Object.freeze(enumOf(`${at}.items.enum`, it.enum, items.type, fail));
    p.items = Object.freeze(items);
  }
  if (raw.default !== undefined && raw.default !== null) {
    const problems = valueProblems(name, raw.default, p);
    if (problems.length) fail(`${at}.default`, problems.join('; '));
    p.default = raw.default;
  }
  return Object.freeze(p);
}
