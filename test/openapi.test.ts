/**
 * /openapi.json: an OpenAPI 3.0 document that describes what the gateway serves, uses only
 * schema keywords OpenAPI 3.0 accepts and whose references all resolve; health and readiness
 * answer with the documented bodies; CORS headers and preflight.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { randomUUID } from 'node:crypto';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { json, startTestApp, type TestApp } from './helpers/app.js';
import type { RegisteredRoute } from './helpers/uws-routes.js';

const registered = vi.hoisted(() => [] as RegisteredRoute[]);
// The gateway's route table: every route it registers on its uWebSockets.js app.
vi.mock('uWebSockets.js', async (importOriginal) => (await import('./helpers/uws-routes.js')).recordRoutes(await importOriginal(), registered));

let t: TestApp;

let doc: any;

beforeAll(async () => {
  t = await startTestApp();
  const res = await fetch(`${t.base}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = await json(res);
});
afterAll(async () => {
  await t?.stop();
});

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Resolves a local JSON pointer such as #/components/schemas/Error. */
function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObj(cur) || !(key in cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/** Every value in the document with its JSON path. */
function* walk(v: unknown, path = '#'): Generator<[string, unknown]> {
  yield [path, v];
  if (Array.isArray(v)) for (const [i, x] of v.entries()) yield* walk(x, `${path}/${i}`);
  else if (isObj(v)) for (const [k, x] of Object.entries(v)) yield* walk(x, `${path}/${k}`);
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every Schema Object of the document (components, parameters, bodies, responses, headers, nested). */
function schemas(): [string, Obj][] {
  const out: [string, Obj][] = [];
  const visit = (s: unknown, path: string) => {
    if (!isObj(s)) return;
    out.push([path, s]);
    if ('$ref' in s) return;
    if (isObj(s.properties)) for (const [k, p] of Object.entries(s.properties)) visit(p, `${path}/properties/${k}`);
    if (s.items !== undefined) visit(s.items, `${path}/items`);
    if (isObj(s.additionalProperties)) visit(s.additionalProperties, `${path}/additionalProperties`);
    if (s.not !== undefined) visit(s.not, `${path}/not`);
    for (const k of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[k])) (s[k] as unknown[]).forEach((x, i) => visit(x, `${path}/${k}/${i}`));
  };
  const content = (c: unknown, path: string) => {
    if (isObj(c)) for (const [mt, m] of Object.entries(c)) if (isObj(m)) visit(m.schema, `${path}/content/${mt}/schema`);
  };
  const response = (r: unknown, path: string) => {
    if (!isObj(r)) return;
    content(r.content, path);
    if (isObj(r.headers)) for (const [h, hv] of Object.entries(r.headers)) if (isObj(hv)) visit(hv.schema, `${path}/headers/${h}/schema`);
  };
  for (const [name, s] of Object.entries(doc.components?.schemas ?? {})) visit(s, `#/components/schemas/${name}`);
  for (const [p, item] of Object.entries(doc.paths as Obj)) {
    if (!isObj(item)) continue;
    for (const m of METHODS) {
      const op = item[m];
      if (!isObj(op)) continue;
      const base = `#/paths/${p}/${m}`;
      for (const [i, prm] of ((op.parameters as unknown[]) ?? []).entries()) if (isObj(prm)) visit(prm.schema, `${base}/parameters/${i}/schema`);
      if (isObj(op.requestBody)) content(op.requestBody.content, `${base}/requestBody`);
      for (const [code, r] of Object.entries((op.responses as Obj) ?? {})) response(r, `${base}/responses/${code}`);
    }
  }
  return out;
}

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3.0.x document', () => {
    expect(doc.openapi).toMatch(/^3\.0\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(isObj(doc.paths)).toBe(true);
  });

  it('validates against the official OpenAPI 3.0 JSON schema', async () => {
    const validator = new Validator();
    const res = await validator.validate(structuredClone(doc));
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
    expect(validator.version).toMatch(/^3\.0/);
  });

  it('documents every path and method the gateway serves (its uWS route table), and only those', () => {
    // `/api/v1/tasks/:id`, `/api/v1/tasks/{id}` and `/api/v1/sessions/:id/files/*` vs `.../{path}`: one shape.
    const shape = (p: string) =>
      p
        .replace(/:[^/]+/g, '{}')
        .replace(/\{[^}]+\}/g, '{}')
        .replace(/\/\*$/, '/{}');
    const verb: Record<string, string> = { del: 'delete', ws: 'get' };
    // '/*' is the CORS preflight (options) and the catch-all 404 (any): not API routes.
    const served = new Set(registered.filter((r) => r.pattern !== '/*').map((r) => `${verb[r.method] ?? r.method} ${shape(r.pattern)}`));
    const documented = new Set(
      Object.entries(doc.paths as Obj).flatMap(([p, item]) => METHODS.filter((m) => isObj(item) && item[m]).map((m) => `${m} ${shape(p)}`)),
    );
    expect(served.size).toBeGreaterThanOrEqual(30);
    expect(
      [...served].filter((x) => !documented.has(x)),
      'served but not documented',
    ).toEqual([]);
    expect(
      [...documented].filter((x) => !served.has(x)),
      'documented but not served',
    ).toEqual([]);
  });

  it('describes each operation completely: unique operationId, responses with descriptions, path parameters', () => {
    const ids = new Set<string>();
    for (const [p, item] of Object.entries(doc.paths as Obj)) {
      for (const m of METHODS) {
        const op = (item as Obj)[m] as Obj | undefined;
        if (!op) continue;
        const where = `${m} ${p}`;
        expect(typeof op.operationId, where).toBe('string');
        expect(ids.has(op.operationId as string), `duplicate operationId ${op.operationId}`).toBe(false);
        ids.add(op.operationId as string);
        const responses = op.responses as Obj;
        expect(Object.keys(responses).length, where).toBeGreaterThan(0);
        for (const [code, r] of Object.entries(responses)) {
          expect(code, where).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/);
          const resolved = isObj(r) && typeof r.$ref === 'string' ? resolvePointer(doc, r.$ref) : r;
          expect(typeof (resolved as Obj).description, `${where} ${code}`).toBe('string');
        }
        const params = ((op.parameters as Obj[]) ?? []).concat(((item as Obj).parameters as Obj[]) ?? []);
        for (const prm of params) {
          expect(['query', 'header', 'path', 'cookie'], where).toContain(prm.in);
          expect(prm.schema ?? prm.content, `${where} ${prm.name}`).toBeDefined();
          if (prm.in === 'path') expect(prm.required, `${where} ${prm.name}`).toBe(true);
        }
        for (const [, name] of p.matchAll(/\{([^}]+)\}/g)) {
          expect(
            params.some((x) => x.in === 'path' && x.name === name),
            `${where} declares path parameter ${name}`,
          ).toBe(true);
        }
        for (const sec of (op.security as Obj[]) ?? [])
          for (const k of Object.keys(sec)) expect(doc.components.securitySchemes[k], `${where} security ${k}`).toBeDefined();
      }
    }
  });

  it('every $ref resolves inside the document', () => {
    let refs = 0;
    for (const [path, v] of walk(doc)) {
      if (!isObj(v) || !('$ref' in v)) continue;
      refs++;
      expect(typeof v.$ref, path).toBe('string');
      expect(v.$ref as string, path).toMatch(/^#\//);
      expect(resolvePointer(doc, v.$ref as string), `${path}: ${v.$ref}`).toBeDefined();
      // OpenAPI 3.0: siblings of $ref are ignored, so none are expected.
      expect(Object.keys(v), path).toEqual(['$ref']);
    }
    expect(refs).toBeGreaterThan(5);
  });

  it('uses no schema keyword OpenAPI 3.0 rejects', () => {
    const rejected = [
      'const',
      'patternProperties',
      '$id',
      '$schema',
      '$defs',
      'definitions',
      'if',
      'then',
      'else',
      'prefixItems',
      'unevaluatedProperties',
      'unevaluatedItems',
      'dependentRequired',
      'dependentSchemas',
      'dependencies',
      'propertyNames',
      'contains',
      'examples',
      'contentEncoding',
      'contentMediaType',
      '$anchor',
      '$comment',
    ];
    const types = ['string', 'number', 'integer', 'boolean', 'array', 'object'];
    const all = schemas();
    expect(all.length).toBeGreaterThan(20);
    for (const [path, s] of all) {
      for (const k of rejected) expect(k in s, `${path} uses ${k}`).toBe(false);
      if ('type' in s) {
        expect(typeof s.type, `${path}: type must be a single string`).toBe('string');
        expect(types, path).toContain(s.type);
      }
      if ('nullable' in s) {
        expect(typeof s.nullable, path).toBe('boolean');
        expect(s.type, `${path}: nullable needs a type`).toBeDefined();
      }
      for (const k of ['exclusiveMinimum', 'exclusiveMaximum']) if (k in s) expect(typeof s[k], `${path}.${k} must be a boolean in 3.0`).toBe('boolean');
      if ('required' in s) {
        expect(Array.isArray(s.required), path).toBe(true);
        expect((s.required as unknown[]).length, `${path}: required must not be empty`).toBeGreaterThan(0);
        for (const r of s.required as string[]) expect(isObj(s.properties) && r in s.properties, `${path}: required ${r} is a property`).toBe(true);
      }
      if (s.type === 'array') expect(s.items, `${path}: arrays need items`).toBeDefined();
      if ('additionalProperties' in s) expect(typeof s.additionalProperties === 'boolean' || isObj(s.additionalProperties), path).toBe(true);
      if ('enum' in s) expect(Array.isArray(s.enum) && (s.enum as unknown[]).length > 0, path).toBe(true);
    }
  });

  it('documents only routes that exist (none falls through to the catch-all 404)', async () => {
    const id = randomUUID();
    for (const p of Object.keys(doc.paths)) {
      if (p === '/api/v1/stream/ws' || p === '/v1/ws/messages') continue; // upgrade endpoints; covered in streaming and daemon tests
      const url = t.base + p.replace('{id}', id);
      for (const m of METHODS.filter((x) => doc.paths[p][x])) {
        const ac = new AbortController();
        const res = await fetch(url, {
          method: m.toUpperCase(),
          signal: ac.signal,
          headers: { 'content-type': 'application/json' },
          body: m === 'post' ? '{}' : undefined,
        });
        if (res.headers.get('content-type') === 'text/event-stream') {
          expect(res.status).toBe(200);
          ac.abort();
          continue;
        }
        const body = await res.text();
        expect(body, `${m} ${p}`).not.toMatch(/Not found: /);
      }
    }
  });
});

describe('health, readiness and CORS', () => {
  const validate = (name: string, body: unknown) => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const check = ajv.compile(doc.components.schemas[name]);
    const ok = check(body);
    expect(ok, `${name}: ${JSON.stringify(check.errors)}`).toBe(true);
  };

  it('GET /health answers 200 with the documented body', async () => {
    const res = await fetch(`${t.base}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await json(res);
    expect(doc.paths['/health'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Health' });
    validate('Health', body);
    expect(body.status).toBe('healthy');
    expect(new Date(body.time).toISOString()).toBe(body.time);
  });

  it('GET /readiness answers 200 with the documented body and every check ok', async () => {
    const res = await fetch(`${t.base}/readiness`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(doc.paths['/readiness'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Readiness' });
    validate('Readiness', body);
    expect(body.status).toBe('ready');
    expect(Object.keys(body.checks).sort()).toEqual(['database', 'nats', 'orchestrator']);
    for (const c of Object.values(body.checks) as { ok: boolean }[]) expect(c.ok).toBe(true);
  });

  it('the documented schemas are strict enough to reject wrong bodies', () => {
    const ajv = new Ajv({ strict: false });
    expect(ajv.compile(doc.components.schemas.Health)({ status: 'sick', version: '1', time: 'x' })).toBe(false);
    expect(ajv.compile(doc.components.schemas.Readiness)({ status: 'ready', checks: { db: { ok: 'yes' } } })).toBe(false);
  });

  it('sends Access-Control-Allow-Origin: * on responses, errors and streams', async () => {
    const origin = { Origin: 'http://app.example.test' };
    for (const path of ['/health', '/openapi.json', '/api/v1/tasks', `/api/v1/tasks/${randomUUID()}`, '/no/such/route']) {
      const res = await fetch(t.base + path, { headers: origin });
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
      await res.body?.cancel();
    }
    const bad = await fetch(`${t.base}/api/v1/tasks`, { method: 'POST', headers: { ...origin, 'content-type': 'application/json' }, body: '{' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('access-control-allow-origin')).toBe('*');
    const ac = new AbortController();
    const sse = await fetch(`${t.base}/api/v1/stream/sse?workflow_id=${randomUUID()}`, { headers: origin, signal: ac.signal });
    expect(sse.headers.get('access-control-allow-origin')).toBe('*');
    ac.abort();
  });

  it('answers an OPTIONS preflight with the allowed methods and headers', async () => {
    for (const path of ['/api/v1/tasks', `/api/v1/tasks/${randomUUID()}`, '/api/v1/stream/sse']) {
      const res = await fetch(t.base + path, {
        method: 'OPTIONS',
        headers: {
          Origin: 'http://app.example.test',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type, x-api-key, idempotency-key, traceparent',
        },
      });
      expect(res.status, path).toBeGreaterThanOrEqual(200);
      expect(res.status, path).toBeLessThan(300);
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
      const methods = (res.headers.get('access-control-allow-methods') ?? '').split(',').map((s) => s.trim().toUpperCase());
      for (const m of ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS']) expect(methods, path).toContain(m);
      const headers = (res.headers.get('access-control-allow-headers') ?? '').split(',').map((s) => s.trim().toLowerCase());
      for (const h of ['content-type', 'authorization', 'x-api-key', 'idempotency-key', 'traceparent', 'last-event-id']) expect(headers, path).toContain(h);
      expect(res.headers.get('access-control-max-age')).toMatch(/^\d+$/);
      expect((await res.text()).length).toBe(0);
    }
  });

  it('exposes the workflow and rate-limit headers to browsers', async () => {
    const res = await fetch(`${t.base}/health`, { headers: { Origin: 'http://app.example.test' } });
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(',').map((s) => s.trim().toLowerCase());
    for (const h of ['x-workflow-id', 'x-session-id', 'retry-after']) expect(exposed).toContain(h);
  });
});
