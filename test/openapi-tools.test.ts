/**
 * OpenAPI documents as tools, at unit level against one local server that serves both the
 * documents (JSON, YAML, broken ones) and the API they describe: loading and its refusals,
 * operations and their argument schemas, and calls of every kind as the API sees them.
 */
import { Ajv } from 'ajv';
import { stringify as toYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { AppError, Code, type Logger } from '../src/kernel/index.js';
import { createGuardedFetch, type Tool, ToolError } from '../src/tools/index.js';
import { loadOpenApiDocument, openApiOperations, openApiTools, type OpenApiOperation } from '../src/toolsources/index.js';
import { ctx, startServer, type TestServer, toolError } from './helpers/tools-web.js';

const petstore = {
  openapi: '3.0.3',
  info: { title: 'Petstore', version: '1.2.0' },
  paths: {
    '/pets': {
      get: {
        operationId: 'listPets',
        summary: 'List pets',
        parameters: [
          { $ref: '#/components/parameters/Limit' },
          { name: 'tags', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
          { name: 'X-Request-Id', in: 'header', required: true, schema: { type: 'string' } },
          { name: 'Accept', in: 'header', schema: { type: 'string' } },
        ],
        responses: { '200': { description: 'pets' } },
      },
      post: {
        operationId: 'createPet',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } },
        responses: { '201': { description: 'created' } },
      },
    },
    '/pets/{petId}': {
      parameters: [{ name: 'petId', in: 'path', required: true, description: 'The pet', schema: { type: 'string' } }],
      get: { operationId: 'showPetById', description: 'One pet', responses: { '200': { description: 'a pet' } } },
      put: {
        operationId: 'updatePet',
        parameters: [
          { name: 'petId', in: 'query', schema: { type: 'integer' } },
          { name: 'body', in: 'query', schema: { type: 'string' } },
        ],
        requestBody: { content: { 'application/merge-patch+json': { schema: { $ref: '#/components/schemas/Pet' } } } },
        responses: { '200': { description: 'updated' } },
      },
    },
    '/tree': {
      post: {
        operationId: 'plantTree',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } },
        responses: { '200': { description: 'ok' } },
      },
    },
    '/upload': {
      post: {
        operationId: 'uploadFile',
        requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object' } } } },
        responses: { '200': { description: 'ok' } },
      },
    },
    '/session': {
      get: {
        operationId: 'getSession',
        parameters: [{ name: 'sid', in: 'cookie', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok' } },
      },
      delete: {
        operationId: 'endSession',
        parameters: [{ name: 'sid', in: 'cookie', schema: { type: 'string' } }],
        responses: { '204': { description: 'ended' } },
      },
    },
    '/fail/{code}': {
      get: {
        operationId: 'failWith',
        parameters: [{ name: 'code', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { default: { description: 'an error' } },
      },
    },
    '/big': { get: { operationId: 'bigAnswer', responses: { '200': { description: 'a lot' } } } },
    '/unnamed': { get: { responses: { '200': { description: 'no operationId' } } } },
    '/odd': { get: { operationId: 'odd id!', responses: { '200': { description: 'bad operationId' } } } },
  },
  components: {
    parameters: { Limit: { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 0, exclusiveMinimum: true } } },
    schemas: {
      Pet: {
        type: 'object',
        required: ['name'],
        properties: {
          id: { type: 'integer', format: 'int64', readOnly: true },
          name: { type: 'string', example: 'Rex' },
          tag: { type: 'string', nullable: true },
          owner: { $ref: '#/components/schemas/Owner' },
        },
      },
      Owner: { type: 'object', properties: { name: { type: 'string' } }, 'x-internal': true },
      Node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } },
    },
  },
};
const OFFERED = ['listPets', 'createPet', 'showPetById', 'updatePet', 'plantTree', 'endSession', 'failWith', 'bigAnswer'];
const SECRET = 'SECRETKEY123';

let server: TestServer;
let ops: OpenApiOperation[];
let tools: Map<string, Tool>;
const skipped: Array<{ operation: string; reason: string }> = [];
const fetch = createGuardedFetch({ allowHosts: ['127.0.0.1/32'] });

beforeAll(async () => {
  server = await startServer((req, res, body) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, data: unknown, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(typeof data === 'string' ? data : JSON.stringify(data));
    };
    if (url.pathname === '/openapi.json') return send(200, petstore);
    if (url.pathname === '/openapi.yaml') return send(200, toYaml(petstore), 'application/yaml');
    if (url.pathname === '/swagger.json') return send(200, { swagger: '2.0', info: { title: 'old', version: '1' }, paths: {} });
    if (url.pathname === '/silent.json') return;
    if (url.pathname === '/chunked-big.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"openapi":"3.0.3","x-padding":"${'p'.repeat(3000)}`);
      return res.end(`${'p'.repeat(3000)}"}`);
    }
    if (!url.pathname.startsWith('/api/')) return send(404, { error: 'not found' });
    const fail = /^\/api\/fail\/(\d+)$/.exec(url.pathname);
    if (fail) return send(Number(fail[1]), { error: `no such pet, key=${SECRET}` });
    if (url.pathname === '/api/big') return send(200, 'x'.repeat(50_000), 'text/plain');
    if (req.method === 'DELETE') return res.writeHead(204).end();
    return send(200, { method: req.method, path: url.pathname, body: body ? JSON.parse(body) : null });
  });
  const loaded = await loadOpenApiDocument({ specUrl: `${server.origin}/openapi.json` }, { fetch, maxBytes: 1_000_000 });
  expect(loaded).toMatchObject({ title: 'Petstore', version: '1.2.0', doc: petstore });
  const log = { warn: (o: { operation: string; reason: string }) => skipped.push(o) } as unknown as Logger;
  ops = await openApiOperations(loaded.doc, { log });
  const source = {
    name: 'petstore',
    baseUrl: `${server.origin}/api/`,
    headers: { 'X-Api-Key': SECRET },
    timeoutMs: 5_000,
    rateLimitPerMinute: 30,
    rateLimitKey: 'src.1',
    version: '1.2.0',
  };
  tools = new Map(openApiTools(source, ops, { fetch, maxResponseChars: 1_000 }).map((t) => [t.name, t]));
});

async function badRequestOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe(Code.InvalidArgument);
  return (err as AppError).message;
}

async function call(op: string, args: Record<string, unknown>) {
  const out = await tools.get(`openapi.petstore.${op}`)!.run(args, ctx());
  return { out, seen: server.requests.at(-1)! };
}

describe('OpenAPI documents', () => {
  it('reads JSON and YAML alike; offers each operation with an operationId and says why others are skipped', async () => {
    const yaml = await loadOpenApiDocument({ specUrl: `${server.origin}/openapi.yaml` }, { fetch, maxBytes: 1_000_000 });
    expect(yaml.doc).toEqual(petstore);
    expect(await openApiOperations(yaml.doc)).toEqual(ops);
    expect(ops.map((o) => o.operationId)).toEqual(OFFERED);
    expect(skipped).toEqual([
      { operation: 'POST /upload', reason: 'its request body is required and not JSON (multipart/form-data)' },
      { operation: 'GET /session', reason: 'it requires cookie parameter "sid", which tools do not send' },
      { operation: 'GET /odd', reason: 'operationId "odd id!" is not 1-100 letters, digits, "_", "." or "-"' },
    ]);
  });

  it('describes the arguments in JSON Schema: parameters by key, `body`, references resolved, recursion cut', () => {
    const op = (id: string) => ops.find((o) => o.operationId === id)!;
    expect(op('listPets').inputSchema).toEqual({
      type: 'object',
      properties: {
        limit: { type: 'integer', exclusiveMinimum: 0 },
        tags: { type: 'array', items: { type: 'string' } },
        'X-Request-Id': { type: 'string' },
      },
      required: ['X-Request-Id'],
      additionalProperties: false,
    });
    const pet = {
      type: 'object',
      required: ['name'],
      properties: {
        id: { type: 'integer', format: 'int64', readOnly: true },
        name: { type: 'string' },
        tag: { type: ['string', 'null'] },
        owner: { type: 'object', properties: { name: { type: 'string' } } },
      },
    };
    expect(op('createPet')).toMatchObject({
      method: 'POST',
      body: { contentType: 'application/json', required: true },
      inputSchema: { properties: { body: pet }, required: ['body'] },
    });
    const update = op('updatePet');
    expect(Object.keys(update.inputSchema.properties)).toEqual(['path_petId', 'query_petId', 'query_body', 'body']);
    expect(update.inputSchema.required).toEqual(['path_petId']);
    expect(update.inputSchema.properties.path_petId).toEqual({ type: 'string', description: 'The pet' });
    expect(update.body).toEqual({ contentType: 'application/merge-patch+json', required: false });
    expect(op('plantTree').inputSchema.properties.body).toEqual({
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: {} } },
    });
    expect(op('endSession').inputSchema.properties).toEqual({});
    const ajv = new Ajv({ strict: false, logger: false });
    for (const o of ops) expect(() => ajv.compile(o.inputSchema), o.operationId).not.toThrow();
  });

  it('refuses what it cannot use, in words: Swagger 2, oversize, a remote $ref, a loopback spec_url, an invalid document', async () => {
    const at = (path: string, maxBytes = 1_000_000) => loadOpenApiDocument({ specUrl: `${server.origin}${path}` }, { fetch, maxBytes });
    expect(await badRequestOf(at('/swagger.json'))).toBe('only OpenAPI 3 documents are supported (got swagger 2.0)');
    expect(await badRequestOf(at('/openapi.json', 1_000))).toBe('the document at spec_url is larger than 1000 bytes');
    expect(await badRequestOf(at('/chunked-big.json', 5_000))).toBe('the document at spec_url is larger than 5000 bytes');
    expect(await badRequestOf(at('/missing.json'))).toBe('spec_url answered 404');
    const silent = loadOpenApiDocument({ specUrl: `${server.origin}/silent.json` }, { fetch, maxBytes: 1_000, timeoutMs: 100 });
    expect(await badRequestOf(silent)).toBe('could not fetch spec_url: no complete answer within 100 ms');
    expect(await badRequestOf(loadOpenApiDocument({ spec: JSON.stringify(petstore) }, { fetch, maxBytes: 100 }))).toBe('spec is larger than 100 bytes');

    const before = server.requests.length;
    const remote = {
      ...petstore,
      components: { ...petstore.components, schemas: { ...petstore.components.schemas, Owner: { $ref: `${server.origin}/owner.json` } } },
    };
    expect(await badRequestOf(loadOpenApiDocument({ spec: remote }, { fetch, maxBytes: 1_000_000 }))).toBe(
      `$ref "${server.origin}/owner.json" at /components/schemas/Owner points outside the document; only local references (#/...) are supported`,
    );
    expect(await badRequestOf(loadOpenApiDocument({ spec: toYaml(remote) }, { fetch, maxBytes: 1_000_000 }))).toMatch(/points outside the document/);
    expect((await openApiOperations(remote)).map((o) => o.operationId)).toEqual(OFFERED); // reading a stored document resolves nothing remote either
    expect(server.requests.length).toBe(before); // never fetched

    const guarded = createGuardedFetch({ allowHosts: [] });
    expect(await badRequestOf(loadOpenApiDocument({ specUrl: `${server.origin}/openapi.json` }, { fetch: guarded, maxBytes: 1_000_000 }))).toBe(
      'could not fetch spec_url: refused: 127.0.0.1 is a loopback address',
    );
    expect(server.requests.length).toBe(before);

    expect(await badRequestOf(loadOpenApiDocument({ spec: { openapi: '3.1.0', info: { title: 't' }, paths: {} } }, { fetch, maxBytes: 10_000 }))).toMatch(
      /^invalid OpenAPI document: \/info must have required property 'version'/,
    );
    expect(await badRequestOf(loadOpenApiDocument({ spec: 'openapi: [unclosed' }, { fetch, maxBytes: 10_000 }))).toMatch(/^spec is neither JSON nor YAML/);
    expect(await badRequestOf(loadOpenApiDocument({ spec: { openapi: '3.2.0' } }, { fetch, maxBytes: 10_000 }))).toBe(
      'only OpenAPI 3.0.x and 3.1.x documents are supported (got openapi 3.2.0)',
    );
  });
});

describe('OpenAPI tools', () => {
  it('are named by source and operationId, with the source settings', () => {
    expect([...tools.keys()]).toEqual(OFFERED.map((id) => `openapi.petstore.${id}`));
    const list = tools.get('openapi.petstore.listPets')!;
    expect(list).toMatchObject({
      category: 'openapi',
      version: '1.2.0',
      description: 'List pets',
      timeoutMs: 5_000,
      retryable: true,
      dangerous: false,
      costPerUse: 0,
    });
    expect(list.rateLimit).toEqual({ perMinute: 30, key: 'src.1' });
    expect(tools.get('openapi.petstore.createPet')).toMatchObject({ retryable: false, description: 'POST /pets on OpenAPI tool source "petstore"' });
  });

  it('send the method, path, query, headers and JSON body the operation describes', async () => {
    const list = await call('listPets', { limit: 5, tags: ['a b', 'c'], 'X-Request-Id': 'r-1' });
    expect(list.seen).toMatchObject({ method: 'GET', url: '/api/pets?limit=5&tags=a+b&tags=c' });
    expect(list.seen.headers).toMatchObject({ 'x-request-id': 'r-1', 'x-api-key': SECRET, accept: 'application/json, */*;q=0.5' });
    expect(list.out.output).toEqual({ status: 200, body: { method: 'GET', path: '/api/pets', body: null } });

    const pet = { name: 'Rex', tag: null };
    const created = await call('createPet', { body: pet });
    expect(created.seen).toMatchObject({ method: 'POST', url: '/api/pets', body: JSON.stringify(pet) });
    expect(created.seen.headers['content-type']).toBe('application/json');
    expect(JSON.parse(created.out.text)).toEqual({ method: 'POST', path: '/api/pets', body: pet });

    const updated = await call('updatePet', { path_petId: 'a b/c', query_petId: 3, query_body: 'q', body: { name: 'Max' } });
    expect(updated.seen).toMatchObject({ method: 'PUT', url: '/api/pets/a%20b%2Fc?petId=3&body=q', body: '{"name":"Max"}' });
    expect(updated.seen.headers['content-type']).toBe('application/merge-patch+json');

    const ended = await call('endSession', {});
    expect(ended.seen.method).toBe('DELETE');
    expect(ended.out).toMatchObject({ output: { status: 204, body: '' }, text: '(204, no content)' });

    const injected = await toolError(call('listPets', { 'X-Request-Id': 'a\r\nx-evil: 1' }));
    expect(injected.kind).toBe('bad_arguments');
    expect((await toolError(call('showPetById', { petId: '..' }))).message).toBe('path parameter petId may not be "." or ".."');
  });

  it('report a 4xx as a failure and a 5xx as a backend error, naming the source and never the registered key', async () => {
    const notFound = await toolError(call('failWith', { code: 404 }));
    expect(notFound.message).toBe('OpenAPI tool source "petstore": GET /fail/404 answered 404: {"error":"no such pet, key=[redacted]"}');
    expect(notFound.kind).toBe('failed');
    const down = await toolError(call('failWith', { code: 503 }));
    expect(down.message).toMatch(/^OpenAPI tool source "petstore": GET \/fail\/503 answered 503: /);
    expect(down.kind).toBe('backend');

    const unreachable = openApiTools(
      { name: 'gone', baseUrl: 'http://127.0.0.1:1/', headers: {}, timeoutMs: 1_000, rateLimitPerMinute: 0, rateLimitKey: 'k', version: '1' },
      ops.filter((o) => o.operationId === 'bigAnswer'),
      { fetch },
    )[0];
    expect(unreachable.rateLimit).toBeUndefined();
    const err = await toolError(unreachable.run({}, ctx()));
    expect(err.message).toMatch(/^OpenAPI tool source "gone": GET \/big failed: request to 127\.0\.0\.1:1 failed: connect ECONNREFUSED/);
    expect(err.kind).toBe('backend');
    expect(err).toBeInstanceOf(ToolError);
  });

  it('cut a long answer for the model like web_fetch does', async () => {
    const { out } = await call('bigAnswer', {});
    expect(out.text).toBe(`${'x'.repeat(1_000)}\n\n[truncated: 50000 characters in all]`);
    expect(out.output).toEqual({ status: 200, body: 'x'.repeat(1_000), truncated: true });
  });
});
