/**
 * The model behind the schema-driven form (schema-form.tsx): the fields of an object JSON Schema
 * (each property one kind of input), their first values (the defaults), and the value the form
 * sends, built from what was typed and checked field by field first (required, numbers, bounds,
 * lengths, pattern, item counts, JSON). The service checks it again and has the final word: the
 * field its 400 message names is found here so the form can show the message next to it too.
 */

/** One property's schema, as loose as JSON Schema is. */
export type PropSchema = { [key: string]: unknown };

/** An object schema: its properties and which of them are required (the agent catalogue's input_schema or a tool's parameters). */
export interface ObjectSchema {
  properties?: { [name: string]: PropSchema };
  required?: string[];
  [key: string]: unknown;
}

/**
 * text / textarea: a string; number / integer: a number input; checkbox: a boolean that is always
 * sent; tristate: a boolean that may be left unset; select: one of an enum; list: an array of
 * scalars, one a line; choices: an array of enum values, a checkbox each; json: anything else,
 * typed as JSON.
 */
export type Kind = 'text' | 'textarea' | 'number' | 'integer' | 'checkbox' | 'tristate' | 'select' | 'list' | 'choices' | 'json';

export type Scalar = 'string' | 'number' | 'integer' | 'boolean';

export interface Field {
  name: string;
  label: string;
  kind: Kind;
  required: boolean;
  description?: string;
  schema: PropSchema;
  /** The allowed values (select, choices). */
  options?: unknown[];
  /** The type of the items (list). */
  itemType?: Scalar;
  /** The JSON type the value must have (json), when the schema names one. */
  jsonType?: string;
}

/** What a field holds while it is edited: text, a checkbox state, or the indices of the chosen options. */
export type FieldValue = string | boolean | string[];
export type Values = Record<string, FieldValue>;
export type Errors = Record<string, string>;

const SCALARS = new Set(['string', 'number', 'integer', 'boolean']);
/** String properties that usually hold several lines. */
const LONG_TEXT = /(^|_)(code|content|text|prompt|stdin|body|script|html|markdown)$/;

/** The type a property names (the first but null of a list of types). */
function typeOf(p: PropSchema | undefined): string | undefined {
  const t = p?.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === 'string' && x !== 'null');
  return undefined;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function kindOf(name: string, p: PropSchema, required: boolean): Pick<Field, 'kind' | 'options' | 'itemType' | 'jsonType'> {
  const type = typeOf(p);
  if (Array.isArray(p.enum) && p.enum.length > 0) return { kind: 'select', options: p.enum };
  if (type === 'boolean') return { kind: required || 'default' in p ? 'checkbox' : 'tristate' };
  if (type === 'integer' || type === 'number') return { kind: type };
  if (type === 'string') {
    const max = num(p.maxLength);
    return { kind: (max !== undefined && max > 4096) || LONG_TEXT.test(name) ? 'textarea' : 'text' };
  }
  if (type === 'array' && isObject(p.items)) {
    const items = p.items;
    if (Array.isArray(items.enum) && items.enum.length > 0) return { kind: 'choices', options: items.enum };
    const it = typeOf(items);
    if (it && SCALARS.has(it)) return { kind: 'list', itemType: it as Scalar };
  }
  return { kind: 'json', jsonType: type };
}

/** The fields of an object schema, in the order of its properties. */
export function fieldsOf(schema: ObjectSchema | undefined): Field[] {
  const props = isObject(schema?.properties) ? (schema.properties as Record<string, PropSchema>) : {};
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  return Object.entries(props).map(([name, raw]) => {
    const p = isObject(raw) ? raw : {};
    const req = required.has(name);
    return {
      name,
      label: typeof p.title === 'string' && p.title ? p.title : name,
      required: req,
      description: typeof p.description === 'string' && p.description ? p.description : undefined,
      schema: p,
      ...kindOf(name, p, req),
    };
  });
}

/** The text of a scalar as typed in a list (one a line). */
const scalarText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** The first values of the fields: the defaults where the schema gives them. */
export function initialValues(fields: Field[]): Values {
  const out: Values = {};
  for (const f of fields) {
    const has = 'default' in f.schema && f.schema.default !== null;
    const d = f.schema.default;
    switch (f.kind) {
      case 'checkbox':
        out[f.name] = d === true;
        break;
      case 'tristate':
        out[f.name] = has ? String(d === true) : '';
        break;
      case 'select': {
        const i = has ? f.options!.findIndex((o) => JSON.stringify(o) === JSON.stringify(d)) : -1;
        out[f.name] = i >= 0 ? String(i) : '';
        break;
      }
      case 'choices':
        out[f.name] = Array.isArray(d) ? f.options!.flatMap((o, i) => (d.some((x) => JSON.stringify(x) === JSON.stringify(o)) ? [String(i)] : [])) : [];
        break;
      case 'list':
        out[f.name] = Array.isArray(d) ? d.map(scalarText).join('\n') : '';
        break;
      case 'json':
        out[f.name] = has ? JSON.stringify(d, null, 2) : '';
        break;
      default:
        out[f.name] = has ? String(d) : '';
    }
  }
  return out;
}

/** Checks a string against the schema's lengths and pattern (characters counted as code points, as JSON Schema does). */
function stringError(s: string, p: PropSchema): string | undefined {
  const len = [...s].length;
  const min = num(p.minLength);
  const max = num(p.maxLength);
  if (min !== undefined && len < min) return `At least ${min} character${min === 1 ? '' : 's'}.`;
  if (max !== undefined && len > max) return `At most ${max} characters (${len} now).`;
  if (typeof p.pattern === 'string') {
    try {
      if (!new RegExp(p.pattern, 'u').test(s)) return `Does not match the pattern ${p.pattern}.`;
    } catch {
      // A pattern this browser cannot compile: the service checks it.
    }
  }
  return undefined;
}

/** Checks a number against the schema's type and bounds. */
function numberError(n: number, p: PropSchema, integer: boolean): string | undefined {
  if (integer && !Number.isInteger(n)) return 'A whole number.';
  const min = num(p.minimum);
  const max = num(p.maximum);
  const xmin = num(p.exclusiveMinimum);
  const xmax = num(p.exclusiveMaximum);
  if (min !== undefined && n < min) return `At least ${min}.`;
  if (max !== undefined && n > max) return `At most ${max}.`;
  if (xmin !== undefined && n <= xmin) return `More than ${xmin}.`;
  if (xmax !== undefined && n >= xmax) return `Less than ${xmax}.`;
  return undefined;
}

function countError(n: number, p: PropSchema): string | undefined {
  const min = num(p.minItems);
  const max = num(p.maxItems);
  if (min !== undefined && n < min) return `At least ${min} item${min === 1 ? '' : 's'}.`;
  if (max !== undefined && n > max) return `At most ${max} item${max === 1 ? '' : 's'} (${n} now).`;
  return undefined;
}

/** One item of a list, typed as its schema says. */
function listItem(text: string, type: Scalar, items: PropSchema): { value?: unknown; error?: string } {
  if (type === 'string') return { value: text, error: stringError(text, items) };
  if (type === 'boolean') {
    if (text === 'true' || text === 'false') return { value: text === 'true' };
    return { error: `"${text}" is not true or false.` };
  }
  const n = Number(text);
  if (!Number.isFinite(n)) return { error: `"${text}" is not a number.` };
  return { value: n, error: numberError(n, items, type === 'integer') };
}

const JSON_TYPES: Record<string, (v: unknown) => boolean> = {
  object: isObject,
  array: Array.isArray,
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number',
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
};

/** The value of one field: `{}` when it is left out, `{ error }` when what was typed does not fit. */
function fieldValue(f: Field, v: FieldValue): { value?: unknown; error?: string } {
  const p = f.schema;
  const missing = f.required ? { error: 'Required.' } : {};
  switch (f.kind) {
    case 'checkbox':
      return { value: v === true };
    case 'tristate':
      return v === '' ? missing : { value: v === 'true' };
    case 'select':
      return v === '' ? missing : { value: f.options![Number(v)] };
    case 'choices': {
      const picked = (v as string[]).map((i) => f.options![Number(i)]);
      if (picked.length === 0) return missing;
      return { value: picked, error: countError(picked.length, p) };
    }
    case 'list': {
      const type = f.itemType!;
      // Strings one a line (a comma may belong to the text); numbers and booleans by line or comma.
      const parts = (v as string)
        .split(type === 'string' ? /\r?\n/ : /[\r\n,]+/)
        .map((s) => s.trim())
        .filter((s) => s !== '');
      if (parts.length === 0) return missing;
      const items = isObject(p.items) ? p.items : {};
      const value: unknown[] = [];
      for (const part of parts) {
        const r = listItem(part, type, items);
        if (r.error) return { error: `Item ${value.length + 1}: ${r.error}` };
        value.push(r.value);
      }
      return { value, error: countError(value.length, p) };
    }
    case 'number':
    case 'integer': {
      const s = (v as string).trim();
      if (s === '') return missing;
      const n = Number(s);
      if (!Number.isFinite(n)) return { error: 'Not a number.' };
      return { value: n, error: numberError(n, p, f.kind === 'integer') };
    }
    case 'json': {
      const s = (v as string).trim();
      if (s === '') return missing;
      let parsed: unknown;
      try {
        parsed = JSON.parse(s);
      } catch (err) {
        return { error: `Not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
      }
      const check = f.jsonType ? JSON_TYPES[f.jsonType] : undefined;
      if (check && !check(parsed)) return { error: `Must be JSON of type ${f.jsonType}.` };
      if (f.jsonType === 'array' && Array.isArray(parsed)) return { value: parsed, error: countError(parsed.length, p) };
      return { value: parsed };
    }
    default: {
      const s = v as string;
      if (s === '') return missing;
      return { value: s, error: stringError(s, p) };
    }
  }
}

/** The object the form sends (only the schema's properties, empty fields left out) and the errors that stop it being sent. */
export function buildValue(fields: Field[], values: Values): { value: Record<string, unknown>; errors: Errors } {
  const value: Record<string, unknown> = {};
  const errors: Errors = {};
  for (const f of fields) {
    const r = fieldValue(f, values[f.name] ?? '');
    if (r.error) errors[f.name] = r.error;
    else if (r.value !== undefined) value[f.name] = r.value;
  }
  return { value, errors };
}

/**
 * The field a service message names, if it is one of the form's: "missing required field: x",
 * "field x: ...", "field x[0]: ...", "unknown field: x", "arguments.x is required", "/x must ...".
 */
export function fieldOfMessage(message: string, fields: Field[]): string | undefined {
  const names = new Set(fields.map((f) => f.name));
  const patterns = [/required field:? "?([\w.-]+)/, /\bfield "?([\w-]+)"?(?:\[\d+\])?:/, /\barguments\.([\w-]+)/, /(?:^|\s)\/([\w-]+)(?:\/|\s)/];
  for (const re of patterns) {
    const m = re.exec(message);
    if (m && names.has(m[1]!)) return m[1];
  }
  return undefined;
}
