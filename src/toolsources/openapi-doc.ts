/**
 * OpenAPI documents users register as tool sources: loading one, and reading the operations
 * that become tools.
 *
 * Loading (`loadOpenApiDocument`): fetched from its spec_url (through the SSRF-guarded fetch,
 * at most maxBytes) or given inline, as JSON or YAML text or an object; then checked: OpenAPI
 * 3.0.x or 3.1.x, valid against the specification's schema, and self-contained (a `$ref` to
 * another file or URL is refused, so nothing is ever fetched on the document's say-so). Every
 * failure is a 400 saying what is wrong, since the user can fix it. The document is returned
 * as given, to be stored.
 *
 * Reading (`openApiOperations`): local `$ref`s are resolved (json-schema-ref-parser, external
 * resolution off), then each operation with an operationId yields the JSON Schema of its
 * arguments and how each is sent: one argument per path, query and header parameter (path
 * parameters always required), plus `body` for a JSON request body. A parameter whose name
 * another parameter (or `body`) also uses is called `<in>_<name>`. Cookie parameters and
 * non-JSON bodies cannot be sent: an operation that requires one is skipped, with the reason
 * logged, and otherwise offered without it.
 *
 * The schema validator (@seriousme/openapi-schema-validator) and json-schema-ref-parser are
 * loaded by the first document loaded or read, not at start-up: a process without OpenAPI
 * sources never holds them (~20 MB).
 */
import { parse as parseYaml } from 'yaml';
import { AppError, badRequest, lazyImport, type Logger } from '../kernel/index.js';
import type { GuardedFetch, ToolParameters } from '../tools/index.js';
import { MAX_SCHEMA_NODES, SchemaTooLarge, toJsonSchema, type SchemaBudget } from './openapi-schema.js';

export interface LoadedOpenApiDocument {
  /** The document as given (parsed), to store. */
  doc: Record<string, unknown>;
  /** `info.title`. */
  title: string;
  /** `info.version`. */
  version: string;
}

export interface LoadOpenApiOptions {
  /** The guarded fetch: spec_url is chosen by a user. */
  fetch: GuardedFetch;
  /** Bytes of document accepted at most. */
  maxBytes: number;
  signal?: AbortSignal;
  /** Time to fetch spec_url in (default 30 s). */
  timeoutMs?: number;
}

const DEFAULT_FETCH_TIMEOUT_MS = 30_000;

/** One validator for the process: it compiles the specification's schemas once per version (~0.3 s). */
const validator = lazyImport(async () => new (await import('@seriousme/openapi-schema-validator')).Validator());
const refParser = lazyImport(async () => (await import('@apidevtools/json-schema-ref-parser')).default);

export async function loadOpenApiDocument(src: { specUrl?: string; spec?: unknown }, o: LoadOpenApiOptions): Promise<LoadedOpenApiDocument> {
  if (src.specUrl !== undefined && src.spec !== undefined) throw badRequest('give either spec_url or spec, not both');
  let parsed: unknown;
  if (src.specUrl !== undefined) parsed = parseText(await fetchText(src.specUrl, o), 'the document at spec_url');
  else if (typeof src.spec === 'string') {
    if (Buffer.byteLength(src.spec) > o.maxBytes) throw badRequest(`spec is larger than ${o.maxBytes} bytes`);
    parsed = parseText(src.spec, 'spec');
  } else if (src.spec !== undefined) {
    if (JSON.stringify(src.spec).length > o.maxBytes) throw badRequest(`spec is larger than ${o.maxBytes} bytes`);
    parsed = src.spec;
  } else throw badRequest('spec_url or spec is required');

  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw badRequest('the OpenAPI document must be an object');
  const doc = parsed as Record<string, unknown>;
  checkVersion(doc);
  refuseExternalRefs(doc);
  const result = await (await validator()).validate(doc);
  if (!result.valid) throw badRequest(`invalid OpenAPI document: ${describeErrors(result.errors)}`);
  const info = doc.info as { title: string; version: string };
  return { doc, title: info.title, version: info.version };
}

async function fetchText(specUrl: string, o: LoadOpenApiOptions): Promise<string> {
  const timeoutMs = o.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
  /** The caller's abort passes through; everything else is the user's spec_url failing. */
  const failed = (err: unknown) => {
    if (o.signal?.aborted || err instanceof AppError) return err;
    if (timeout.aborted) return badRequest(`could not fetch spec_url: no complete answer within ${timeoutMs} ms`);
    return badRequest(`could not fetch spec_url: ${err instanceof Error ? err.message : String(err)}`);
  };
  const tooLarge = () => badRequest(`the document at spec_url is larger than ${o.maxBytes} bytes`);
  try {
    const res = await o.fetch(specUrl, { headers: { accept: 'application/json, application/yaml, text/yaml, */*;q=0.5' }, signal });
    if (!res.ok) {
      await res.body?.cancel();
      throw badRequest(`spec_url answered ${res.status}`);
    }
    if (Number(res.headers.get('content-length') ?? 0) > o.maxBytes) {
      await res.body?.cancel();
      throw tooLarge();
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (res.body) {
      const reader = res.body.getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        size += r.value.byteLength;
        if (size > o.maxBytes) {
          await reader.cancel();
          throw tooLarge();
        }
        chunks.push(r.value);
      }
    }
    return new TextDecoder().decode(Buffer.concat(chunks, size));
  } catch (err) {
    throw failed(err);
  }
}

/** JSON or YAML text (YAML 1.2 reads JSON too, but JSON.parse is faster and its errors clearer for JSON). */
function parseText(text: string, what: string): unknown {
  const trimmed = text.trim();
  if (!trimmed) throw badRequest(`${what} is empty`);
  if (trimmed.startsWith('{')) {
    try {
      return JSON.parse(trimmed);
    } catch (err) {
      throw badRequest(`${what} is not valid JSON: ${(err as Error).message}`);
    }
  }
  try {
    return parseYaml(trimmed, { maxAliasCount: 100 });
  } catch (err) {
    throw badRequest(`${what} is neither JSON nor YAML: ${(err as Error).message.split('\n')[0]}`);
  }
}

function checkVersion(doc: Record<string, unknown>): void {
  if (doc.swagger !== undefined) throw badRequest(`only OpenAPI 3 documents are supported (got swagger ${String(doc.swagger)})`);
  if (typeof doc.openapi !== 'string') throw badRequest('not an OpenAPI document: it has no "openapi" version string');
  if (!/^3\.[01]\.\d+$/.test(doc.openapi)) throw badRequest(`only OpenAPI 3.0.x and 3.1.x documents are supported (got openapi ${doc.openapi})`);
}

/** Refuses any `$ref` that leaves the document (another file, a URL): those are never fetched. */
function refuseExternalRefs(doc: Record<string, unknown>): void {
  const seen = new Set<object>();
  const walk = (node: unknown, path: string): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && !v.startsWith('#')) {
        throw badRequest(`$ref "${v}" at ${path || '/'} points outside the document; only local references (#/...) are supported`);
      }
      walk(v, `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    }
  };
  walk(doc, '');
}

/** The first few schema violations, where and what. */
function describeErrors(errors: Array<{ instancePath: string; message?: string }> | string | undefined): string {
  if (typeof errors === 'string') return errors;
  const lines = [...new Set((errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`))];
  return lines.slice(0, 3).join('; ') + (lines.length > 3 ? ` (and ${lines.length - 3} more)` : '');
}

// ---------------------------------------------------------------------------------------------
// Operations

export type ParamLocation = 'path' | 'query' | 'header';

export interface OpenApiParam {
  name: string;
  in: ParamLocation;
  /** The argument that carries it. */
  key: string;
  /** Serialisation (OpenAPI `style` and `explode`, their defaults filled in). */
  style: string;
  explode: boolean;
  /** Sent as JSON text (a parameter described by `content` rather than `schema`). */
  json: boolean;
}

export interface OpenApiOperation {
  operationId: string;
  /** Upper case: GET, POST, ... */
  method: string;
  /** The path template, e.g. `/pets/{petId}`. */
  path: string;
  summary?: string;
  description?: string;
  inputSchema: ToolParameters;
  params: OpenApiParam[];
  /** The JSON request body (argument `body`), if the operation takes one. */
  body?: { contentType: string; required: boolean };
}

/** Tool names are `openapi.<source>.<operationId>`: operationIds outside this are skipped. */
export const OPERATION_ID_RE = /^[A-Za-z0-9_.-]{1,100}$/;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Header parameters OpenAPI says to ignore: the client sets these itself. */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);
const JSON_MEDIA_RE = /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i;

interface RawParam {
  name?: unknown;
  in?: unknown;
  required?: unknown;
  description?: unknown;
  schema?: unknown;
  content?: Record<string, { schema?: unknown }>;
  style?: unknown;
  explode?: unknown;
}

class Skip extends Error {}

export async function openApiOperations(doc: object, o: { log?: Logger } = {}): Promise<OpenApiOperation[]> {
  const $RefParser = await refParser();
  let resolved: { openapi?: string; paths?: Record<string, Record<string, unknown>> };
  try {
    resolved = await $RefParser.dereference(structuredClone(doc) as Record<string, unknown>, {
      resolve: { external: false },
      dereference: { circular: true },
    });
  } catch (err) {
    throw badRequest(`the OpenAPI document's references cannot be resolved: ${(err as Error).message}`);
  }
  const openapi30 = String(resolved.openapi).startsWith('3.0');
  const ops: OpenApiOperation[] = [];
  const seen = new Set<string>();
  for (const [path, item] of Object.entries(resolved.paths ?? {})) {
    if (typeof item !== 'object' || item === null) continue;
    for (const method of METHODS) {
      const op = item[method] as Record<string, unknown> | undefined;
      if (typeof op !== 'object' || op === null) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const skip = (reason: string) => o.log?.warn({ operation: where, reason }, 'OpenAPI operation skipped');
      const id = op.operationId;
      if (typeof id !== 'string') continue;
      if (!OPERATION_ID_RE.test(id)) skip(`operationId "${id.slice(0, 120)}" is not 1-100 letters, digits, "_", "." or "-"`);
      else if (seen.has(id)) skip(`operationId "${id}" is used twice`);
      else {
        try {
          ops.push(operation(id, method, path, item, op, openapi30));
          seen.add(id);
        } catch (err) {
          if (err instanceof Skip) skip(err.message);
          else if (err instanceof SchemaTooLarge) skip(`its parameters' schema is larger than ${MAX_SCHEMA_NODES} nodes once expanded`);
          else throw err;
        }
      }
    }
  }
  return ops;
}

function operation(
  operationId: string,
  method: string,
  path: string,
  item: Record<string, unknown>,
  op: Record<string, unknown>,
  openapi30: boolean,
): OpenApiOperation {
  const budget: SchemaBudget = { nodes: MAX_SCHEMA_NODES };
  // Operation-level parameters override path-level ones of the same name and location.
  const byKey = new Map<string, RawParam>();
  for (const p of [...asArray(item.parameters), ...asArray(op.parameters)] as RawParam[]) {
    if (typeof p?.name === 'string' && typeof p.in === 'string') byKey.set(`${p.in}:${p.name}`, p);
  }
  const raw: RawParam[] = [];
  for (const p of byKey.values()) {
    const name = p.name as string;
    if (p.in === 'cookie') {
      if (p.required === true) throw new Skip(`it requires cookie parameter "${name}", which tools do not send`);
    } else if (p.in === 'path' || p.in === 'query' || (p.in === 'header' && !IGNORED_HEADERS.has(name.toLowerCase()))) raw.push(p);
  }

  const body = jsonBody(op.requestBody);
  const taken = new Map<string, number>();
  for (const p of raw) taken.set(p.name as string, (taken.get(p.name as string) ?? 0) + 1);
  if (body) taken.set('body', (taken.get('body') ?? 0) + 1);

  const properties: Record<string, Record<string, unknown>> = {};
  const required: string[] = [];
  const params: OpenApiParam[] = [];
  for (const p of raw) {
    const name = p.name as string;
    const location = p.in as ParamLocation;
    const key = (taken.get(name) ?? 0) > 1 ? `${location}_${name}` : name;
    if (properties[key]) throw new Skip(`two of its parameters would both be called "${key}"`);
    const media = p.content ? Object.values(p.content)[0] : undefined;
    const schema = toJsonSchema(p.schema ?? media?.schema ?? {}, openapi30, budget);
    if (typeof p.description === 'string' && p.description) schema.description = p.description;
    properties[key] = schema;
    if (location === 'path' || p.required === true) required.push(key);
    const style = typeof p.style === 'string' ? p.style : location === 'query' ? 'form' : 'simple';
    params.push({
      name,
      in: location,
      key,
      style,
      explode: typeof p.explode === 'boolean' ? p.explode : style === 'form',
      json: !p.schema && media !== undefined,
    });
  }
  if (body) {
    if (properties.body) throw new Skip('two of its arguments would both be called "body"');
    const schema = toJsonSchema(body.schema, openapi30, budget);
    if (body.description && typeof schema.description !== 'string') schema.description = body.description;
    properties.body = schema;
    if (body.required) required.push('body');
  } else if (isRequiredNonJsonBody(op.requestBody)) {
    const types = Object.keys((op.requestBody as { content: object }).content).join(', ');
    throw new Skip(`its request body is required and not JSON (${types})`);
  }

  const inputSchema: ToolParameters = { type: 'object', properties, additionalProperties: false };
  if (required.length) inputSchema.required = required;
  return {
    operationId,
    method: method.toUpperCase(),
    path,
    ...(typeof op.summary === 'string' && op.summary ? { summary: op.summary } : {}),
    ...(typeof op.description === 'string' && op.description ? { description: op.description } : {}),
    inputSchema,
    params,
    ...(body ? { body: { contentType: body.contentType, required: body.required } } : {}),
  };
}

/** The JSON media type of a request body, if it has one. */
function jsonBody(requestBody: unknown): { contentType: string; schema: unknown; required: boolean; description?: string } | undefined {
  const rb = requestBody as { content?: Record<string, { schema?: unknown }>; required?: unknown; description?: unknown } | undefined;
  if (typeof rb?.content !== 'object' || rb.content === null) return undefined;
  const types = Object.keys(rb.content);
  const contentType = types.find((t) => t.toLowerCase() === 'application/json') ?? types.find((t) => JSON_MEDIA_RE.test(t));
  if (!contentType) return undefined;
  return {
    contentType,
    schema: rb.content[contentType]?.schema ?? {},
    required: rb.required === true,
    ...(typeof rb.description === 'string' && rb.description ? { description: rb.description } : {}),
  };
}

function isRequiredNonJsonBody(requestBody: unknown): boolean {
  const rb = requestBody as { content?: object; required?: unknown } | undefined;
  return rb?.required === true && typeof rb.content === 'object' && rb.content !== null && Object.keys(rb.content).length > 0;
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
