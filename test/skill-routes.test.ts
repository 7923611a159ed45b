/**
 * /api/v1/skills routes on a real uWebSockets.js app (only these routes registered, admission
 * faked: a request without `x-api-key` is refused with 401), over HTTP with fetch. Also checks
 * that `skillPaths` documents exactly the registered routes, using the route recorder of
 * test/helpers/uws-routes.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import uWS, { type us_listen_socket } from 'uWebSockets.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSkillRoutes, skillPaths } from '../src/gateway/skill-routes.js';
import { createLogger, unauthenticated, type Principal } from '../src/kernel/index.js';
import { loadSkills } from '../src/skills/index.js';
import { recordRoutes, type RegisteredRoute } from './helpers/uws-routes.js';

const files: Record<string, string> = {
  'code-review/1.0.0.md': "---\nname: code-review\nversion: '1.0.0'\ndescription: First review\n---\nReview v1.\n",
  'code-review/2.0.0.md':
    "---\nname: code-review\nversion: '2.0.0'\ndescription: Second review\nrole: critic\ntools: [file_read]\nmodel_tier: medium\n---\nReview v2.\n",
  'code-review/1.10.0.md': "---\nname: code-review\nversion: '1.10.0'\ndescription: Between\n---\nReview v1.10.\n",
  'summarize.md': "---\nname: summarize\nversion: '0.1.0'\ndescription: Summaries\n---\nSummarise.\n",
};

let dir: string;
let sock: us_listen_socket | undefined;
let base: string;
const registered: RegisteredRoute[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'skill-routes-'));
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  const skills = loadSkills(dir);
  const app = recordRoutes({ default: uWS }, registered).default.App();
  const admit = async (req: { url: string; headers: Record<string, string> }) => {
    if (!req.headers['x-api-key']) throw unauthenticated();
    const p: Principal = { key: req.headers['x-api-key'], anonymous: false, userId: 'u1' };
    return { p, headers: { 'X-RateLimit-Limit': '60' } };
  };
  registerSkillRoutes(app, { ctx: { cors: { origins: '*' }, log: createLogger({ level: 'silent' }) }, admit, skills });
  const port = await new Promise<number>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (s) => {
      if (!s) return reject(new Error('listen failed'));
      sock = s;
      resolve(uWS.us_socket_local_port(s));
    }),
  );
  base = `http://127.0.0.1:${port}`;
});

afterAll(() => {
  if (sock) uWS.us_listen_socket_close(sock);
  rmSync(dir, { recursive: true, force: true });
});

async function get(path: string, key: string | null = 'k1'): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(base + path, { headers: key ? { 'x-api-key': key } : {} });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

describe('GET /api/v1/skills', () => {
  it('lists each skill with its latest version and every version, oldest first', async () => {
    const r = await get('/api/v1/skills');
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-limit')).toBe('60');
    expect(r.body).toEqual({
      skills: [
        { name: 'code-review', version: '2.0.0', description: 'Second review', versions: ['1.0.0', '1.10.0', '2.0.0'] },
        { name: 'summarize', version: '0.1.0', description: 'Summaries', versions: ['0.1.0'] },
      ],
      total_count: 2,
    });
  });

  it('is behind admission', async () => {
    for (const p of ['/api/v1/skills', '/api/v1/skills/summarize', '/api/v1/skills/summarize/versions']) {
      const r = await get(p, null);
      expect(r.status, p).toBe(401);
      expect(r.body).toEqual({ error: 'Authentication required' });
    }
  });
});

describe('GET /api/v1/skills/{name}', () => {
  it('the latest version with instructions, role, tools, model_tier and versions', async () => {
    const r = await get('/api/v1/skills/code-review');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      name: 'code-review',
      version: '2.0.0',
      description: 'Second review',
      instructions: 'Review v2.',
      role: 'critic',
      tools: ['file_read'],
      model_tier: 'medium',
      content_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      versions: ['1.0.0', '1.10.0', '2.0.0'],
    });
  });

  it('?version= selects one; absent optional fields are null', async () => {
    const r = await get('/api/v1/skills/code-review?version=1.10.0');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: '1.10.0', instructions: 'Review v1.10.', role: null, tools: [], model_tier: null });
    expect((await get('/api/v1/skills/code-review?version=')).body.version).toBe('2.0.0');
  });

  it('unknown skill → 404 Skill not found: <name> (prototype names too); unknown version → 404; malformed version → 400', async () => {
    for (const name of ['nope', 'constructor', '__proto__', 'toString']) {
      const r = await get(`/api/v1/skills/${name}`);
      expect(r.status, name).toBe(404);
      expect(r.body).toEqual({ error: `Skill not found: ${name}` });
    }
    const v = await get('/api/v1/skills/code-review?version=9.0.0');
    expect(v.status).toBe(404);
    expect(v.body).toEqual({ error: 'Skill code-review has no version 9.0.0' });
    const m = await get(`/api/v1/skills/code-review?version=${encodeURIComponent('1.0.0/../x')}`);
    expect(m.status).toBe(400);
    expect(m.body.error).toMatch(/version/);
  });
});

describe('GET /api/v1/skills/{name}/versions', () => {
  it('every version with description and content hash, oldest first', async () => {
    const r = await get('/api/v1/skills/code-review/versions');
    expect(r.status).toBe(200);
    expect(r.body.name).toBe('code-review');
    expect(r.body.versions.map((v: any) => [v.version, v.description])).toEqual([
      ['1.0.0', 'First review'],
      ['1.10.0', 'Between'],
      ['2.0.0', 'Second review'],
    ]);
    const hashes = r.body.versions.map((v: any) => v.content_hash);
    expect(new Set(hashes).size).toBe(3);
    expect(hashes[2]).toBe((await get('/api/v1/skills/code-review')).body.content_hash);
  });

  it('unknown skill → 404', async () => {
    const r = await get('/api/v1/skills/nope/versions');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'Skill not found: nope' });
  });
});

describe('skillPaths (OpenAPI)', () => {
  it('documents exactly the registered routes, each with an operationId, responses and its path parameter', () => {
    const shape = (p: string) => p.replace(/:[^/]+/g, '{}').replace(/\{[^}]+\}/g, '{}');
    const served = registered.map((r) => `${r.method} ${shape(r.pattern)}`).sort();
    const documented = Object.entries(skillPaths)
      .flatMap(([p, item]) => Object.keys(item).map((m) => `${m} ${shape(p)}`))
      .sort();
    expect(served).toEqual(['get /api/v1/skills', 'get /api/v1/skills/{}', 'get /api/v1/skills/{}/versions']);
    expect(documented).toEqual(served);
    for (const [p, item] of Object.entries(skillPaths) as [string, Record<string, any>][]) {
      const op = item.get;
      expect(typeof op.operationId).toBe('string');
      expect(op.responses[200].description).toBeTruthy();
      for (const [, name] of p.matchAll(/\{([^}]+)\}/g)) expect(op.parameters.some((x: any) => x.in === 'path' && x.name === name && x.required)).toBe(true);
    }
  });
});
