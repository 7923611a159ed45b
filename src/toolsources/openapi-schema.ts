/**
 * An OpenAPI Schema Object (already dereferenced) as the plain JSON Schema a tool's parameters
 * are: what the tool registry's validator (Ajv, draft-07) compiles and what models read.
 *
 * OpenAPI 3.0's own dialect is translated (`nullable`, boolean `exclusiveMinimum`/`Maximum`);
 * keywords that only annotate for documentation or code generation (examples, xml,
 * discriminator, extensions) are dropped. A schema that refers to itself (a tree of nodes) is
 * cut where it recurs: `{}`, any value. The copy is bounded in size, because a small document
 * whose references fan out can expand into an enormous schema.
 */

/** Nodes of schema one tool's parameters may hold after expansion. */
export const MAX_SCHEMA_NODES = 20_000;

export class SchemaTooLarge extends Error {}

/** Keywords whose value is a schema. */
const SCHEMA_KEYS = new Set([
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
]);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST_KEYS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYS = new Set(['properties', 'patternProperties', 'dependentSchemas']);
/** Keywords dropped: documentation, code generation, identifiers that mean nothing once references are resolved. */
const DROPPED = new Set([
  'example',
  'examples',
  'xml',
  'externalDocs',
  'discriminator',
  '$schema',
  '$id',
  '$anchor',
  '$dynamicAnchor',
  '$dynamicRef',
  '$comment',
  '$defs',
  'definitions',
  '$ref',
]);

/** A budget of nodes shared by the schemas of one operation. */
export interface SchemaBudget {
  nodes: number;
}

export function toJsonSchema(schema: unknown, openapi30: boolean, budget: SchemaBudget): Record<string, unknown> {
  const out = convert(schema, openapi30, budget, new Set());
  return typeof out === 'object' ? out : out ? {} : { not: {} };
}

function convert(schema: unknown, openapi30: boolean, budget: SchemaBudget, ancestors: Set<object>): Record<string, unknown> | boolean {
  if (typeof schema === 'boolean') return schema;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || ancestors.has(schema)) return {};
  if (--budget.nodes < 0) throw new SchemaTooLarge();
  ancestors.add(schema);
  const src = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(src)) {
    if (DROPPED.has(key) || key.startsWith('x-')) continue;
    const sub = (v: unknown) => convert(v, openapi30, budget, ancestors);
    if (SCHEMA_KEYS.has(key)) out[key] = sub(value);
    else if (SCHEMA_LIST_KEYS.has(key) && Array.isArray(value)) out[key] = value.map(sub);
    else if (key === 'items') out[key] = Array.isArray(value) ? value.map(sub) : sub(value);
    else if (SCHEMA_MAP_KEYS.has(key) && typeof value === 'object' && value !== null) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, v]) => [name, sub(v)]));
    } else out[key] = value;
  }
  ancestors.delete(schema);
  if (openapi30) fromOpenApi30(out);
  return out;
}

/** OpenAPI 3.0's variations on JSON Schema, in the JSON Schema form. */
function fromOpenApi30(s: Record<string, unknown>): void {
  if (s.nullable === true) {
    if (typeof s.type === 'string') s.type = [s.type, 'null'];
    if (Array.isArray(s.enum) && !s.enum.includes(null)) s.enum = [...(s.enum as unknown[]), null];
  }
  delete s.nullable;
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof s[flag] !== 'boolean') continue;
    if (s[flag] && typeof s[bound] === 'number') {
      s[flag] = s[bound];
      delete s[bound];
    } else delete s[flag];
  }
}
