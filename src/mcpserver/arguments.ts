/**
 * Checks a call's arguments against the JSON Schema its tool lists, so what tools/list
 * promises is what tools/call enforces. The first problem is thrown as a 400 naming the field
 * the way the tool registry does (`arguments.task_id is required`, `arguments.limit must be <= 100`).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { badRequest } from '../kernel/index.js';

const ajv = new Ajv({ allErrors: false, strict: false });
const compiled = new WeakMap<object, ValidateFunction>();

function message(e: ErrorObject): string {
  const base = e.instancePath ? `arguments${e.instancePath.replace(/\//g, '.')}` : 'arguments';
  if (e.keyword === 'required') return `${base}.${(e.params as { missingProperty: string }).missingProperty} is required`;
  if (e.keyword === 'additionalProperties') return `${base}.${(e.params as { additionalProperty: string }).additionalProperty} is not a parameter of this tool`;
  if (e.keyword === 'enum') return `${base} must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  return `${base} ${e.message ?? 'is invalid'}`;
}

/** `args` when they fit `schema`; otherwise a 400 naming the first field that does not. */
export function checkArguments<T>(schema: Record<string, unknown>, args: Record<string, unknown>): T {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  if (!v(args)) throw badRequest(message(v.errors![0]!));
  return args as T;
}
