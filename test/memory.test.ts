/**
 * Per-user memory: an agent writes it with the file tools' `scope: "memory"` (a scripted model
 * through the whole service), a later task of the same user in another session reads it, and
 * the owner lists and downloads it through GET /api/v1/memory/files; another user sees none of
 * it; the workspace's path rules (traversal 400 with the exact message, links leading out
 * blocked, the 100 MB cap) hold for memory as for the session workspace; a call without a user
 * is refused with a clear error.
 */
import { request } from 'node:http';
import { mkdir, mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fileTools } from '../src/tools/files.js';
import { ToolError, type Tool } from '../src/tools/index.js';
import { NO_USER_MESSAGE, TOO_LARGE_MESSAGE, TRAVERSAL_MESSAGE, Workspace } from '../src/workspace/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { startOpenAiServer, type OpenAiTestServer, scriptedProvider } from './helpers/openai-server.js';
import { registerUser, type TestUser } from './helpers/users.js';

let llm: OpenAiTestServer;
let t: TestApp;
let root: string;
let outside: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'memory-root-'));
  outside = await mkdtemp(join(tmpdir(), 'memory-outside-'));
  await writeFile(join(outside, 'secret.txt'), 'top secret');
  llm = await startOpenAiServer();
  t = await startTestApp(
    {
      WORKSPACE_ROOT: root,
      GATEWAY_SKIP_AUTH: '0',
      PASSWORD_SCRYPT_N: '1024',
      JWT_SECRET: 'memory-test-secret-0123456789abcdefghijk',
      RATE_LIMIT_REQUESTS: '100000',
      MAX_TOKENS_PER_REQUEST: '0',
      MAX_COST_PER_REQUEST: '0',
    },
    { llm: scriptedProvider(llm) },
  );
});
afterAll(async () => {
  await t?.stop();
  await llm?.close();
  if (root) await rm(root, { recursive: true, force: true });
  if (outside) await rm(outside, { recursive: true, force: true });
});
beforeEach(() => llm.reset());

const get = (u: TestUser | undefined, path: string) => fetch(t.base + path, { headers: u?.h ?? {} });
const memoryDir = (u: TestUser) => join(root, 'memory', u.userId);

/** GET with the path sent exactly as written (fetch would resolve `..`). */
function raw(u: TestUser, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(t.base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET', headers: u.h }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Runs a standard task for `u` and waits for its end. */
async function runTask(u: TestUser, body: Record<string, unknown>) {
  const r = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...u.h },
    body: JSON.stringify({ mode: 'standard', ...body }),
  });
  const b = await json(r);
  expect(r.status, JSON.stringify(b)).toBe(200);
  return waitFor(async () => {
    const s = await json(await get(u, `/api/v1/tasks/${b.task_id}`));
    return /COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(s.status) ? s : undefined;
  }, 30_000);
}

const toolMessages = () => llm.requests.flatMap((r) => (r.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content)));
const NOTE = '# Preferences\n\nThe user prefers short answers in French.\n';

describe('memory written by an agent, read back across sessions, listed and downloaded by its owner', () => {
  let a: TestUser;
  let b: TestUser;
  beforeAll(async () => {
    a = await registerUser(t.base, 'mem-a');
    b = await registerUser(t.base, 'mem-b');
  });

  it("an agent's file_write with scope memory lands in the user's memory, not in the session workspace", async () => {
    llm.enqueue(
      {
        type: 'completion',
        content: '',
        toolCalls: [{ id: 'w1', name: 'file_write', arguments: JSON.stringify({ path: '/prefs/style.md', content: NOTE, scope: 'memory' }) }],
      },
      { type: 'completion', content: 'Noted for next time.' },
    );
    const s = await runTask(a, { query: 'Remember that I prefer short answers in French.', session_id: 'mem-session-1' });
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(toolMessages()[0]).toMatch(/^Wrote \d+ bytes to \/prefs\/style\.md/);
    // Not a session file.
    const ws = await json(await get(a, '/api/v1/sessions/mem-session-1/files?recursive=true'));
    expect(ws.files).toEqual([]);
  });

  it('the owner lists it (top level and recursive), with the session listing fields plus success and size_bytes', async () => {
    const top = await get(a, '/api/v1/memory/files');
    expect(top.status).toBe(200);
    const body = await json(top);
    expect(Object.keys(body).sort()).toEqual(['files', 'path', 'success']);
    expect(body).toMatchObject({ success: true, path: '/' });
    expect(body.files).toEqual([{ name: 'prefs', path: '/prefs', size: 0, size_bytes: 0, is_dir: true, modified_at: expect.any(String) }]);
    const all = await json(await get(a, '/api/v1/memory/files?recursive=true'));
    const size = Buffer.byteLength(NOTE);
    expect(all.files.map((f: { path: string }) => f.path)).toEqual(['/prefs', '/prefs/style.md']);
    expect(all.files[1]).toEqual({ name: 'style.md', path: '/prefs/style.md', size, size_bytes: size, is_dir: false, modified_at: expect.any(String) });
    const sub = await json(await get(a, '/api/v1/memory/files?path=/prefs'));
    expect(sub.files.map((f: { path: string }) => f.path)).toEqual(['/prefs/style.md']);
  });

  it('the owner downloads it as JSON: content, content_type, size_bytes', async () => {
    const r = await get(a, '/api/v1/memory/files/prefs/style.md');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expect(await json(r)).toEqual({
      success: true,
      path: '/prefs/style.md',
      content: NOTE,
      content_type: 'text/plain; charset=utf-8',
      size_bytes: Buffer.byteLength(NOTE),
      encoding: 'utf-8',
    });
  });

  it('a later task of the same user, in another session, reads it with file_read scope memory', async () => {
    llm.enqueue(
      { type: 'completion', content: '', toolCalls: [{ id: 'r1', name: 'file_read', arguments: JSON.stringify({ path: 'prefs/style.md', scope: 'memory' }) }] },
      { type: 'completion', content: 'Bien.' },
    );
    const s = await runTask(a, { query: 'How do I like my answers?', session_id: 'mem-session-2' });
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(toolMessages()).toEqual([NOTE]);
  });

  it("another user sees none of it: an empty memory lists [] (200) and the owner's file is not found", async () => {
    expect(await json(await get(b, '/api/v1/memory/files'))).toEqual({ success: true, path: '/', files: [] });
    expect(await json(await get(b, '/api/v1/memory/files?recursive=true'))).toEqual({ success: true, path: '/', files: [] });
    const dl = await get(b, '/api/v1/memory/files/prefs/style.md');
    expect(dl.status).toBe(404);
    expect(await json(dl)).toEqual({ error: 'file not found' });
    // And b's agent reading that path reads b's (empty) memory.
    llm.enqueue(
      { type: 'completion', content: '', toolCalls: [{ id: 'r2', name: 'file_read', arguments: JSON.stringify({ path: 'prefs/style.md', scope: 'memory' }) }] },
      { type: 'completion', content: 'Nothing.' },
    );
    const s = await runTask(b, { query: 'What do you remember about me?' });
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(toolMessages()).toEqual(['error: file not found']);
  });

  it('a binary file is downloaded base64-encoded with its detected type', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3]);
    await writeFile(join(memoryDir(a), 'pic.png'), png);
    const body = await json(await get(a, '/api/v1/memory/files/pic.png'));
    expect(body).toEqual({
      success: true,
      path: '/pic.png',
      content: png.toString('base64'),
      content_type: 'image/png',
      size_bytes: png.length,
      encoding: 'base64',
    });
  });

  it('answers a missing path, a directory, a file as folder and a bad recursive as the session routes do', async () => {
    const miss = await get(a, '/api/v1/memory/files?path=/nope');
    expect(miss.status).toBe(404);
    expect(await json(miss)).toEqual({ error: 'path not found' });
    const notDir = await get(a, '/api/v1/memory/files?path=/prefs/style.md');
    expect(notDir.status).toBe(400);
    expect(await json(notDir)).toEqual({ error: 'path is not a directory' });
    const dir = await get(a, '/api/v1/memory/files/prefs');
    expect(dir.status).toBe(404);
    expect(await json(dir)).toEqual({ error: 'path is a directory' });
    const bad = await get(a, '/api/v1/memory/files?recursive=maybe');
    expect(bad.status).toBe(400);
    expect(await json(bad)).toEqual({ error: 'recursive must be a boolean' });
  });

  it('the bodies match their openapi.json schemas', async () => {
    const doc = await json(await fetch(`${t.base}/openapi.json`));
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    for (const [name, path] of [
      ['MemoryListing', '/api/v1/memory/files?recursive=true'],
      ['MemoryFile', '/api/v1/memory/files/prefs/style.md'],
      ['MemoryFile', '/api/v1/memory/files/pic.png'],
    ]) {
      const check = ajv.compile(doc.components.schemas[name]);
      const body = await json(await get(a, path));
      expect(check(body), `${name} ${path}: ${JSON.stringify(check.errors)}`).toBe(true);
    }
  });

  it("a direct tool execution (POST /api/v1/tools/file_list/execute) works in the caller's memory too", async () => {
    const r = await fetch(`${t.base}/api/v1/tools/file_list/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...a.h },
      body: JSON.stringify({ arguments: { scope: 'memory', recursive: true } }),
    });
    const body = await json(r);
    expect(r.status, JSON.stringify(body)).toBe(200);
    expect(body.success).toBe(true);
    expect(body.output.files.map((f: { path: string }) => f.path)).toContain('/prefs/style.md');
  });

  it('needs credentials', async () => {
    expect((await get(undefined, '/api/v1/memory/files')).status).toBe(401);
    expect((await get(undefined, '/api/v1/memory/files/prefs/style.md')).status).toBe(401);
  });
});

describe('path rules of memory', () => {
  let u: TestUser;
  beforeAll(async () => {
    u = await registerUser(t.base, 'mem-paths');
    const dir = memoryDir(u);
    await mkdir(join(dir, 'sub'), { recursive: true });
    await writeFile(join(dir, 'a.txt'), 'inside');
    await symlink(outside, join(dir, 'out'));
    await symlink(join(outside, 'secret.txt'), join(dir, 'leak.txt'));
    await symlink('../a.txt', join(dir, 'sub/alias.txt'));
  });

  it('refuses `..`, encoded `..` and absolute paths with 400 and the exact message', async () => {
    for (const p of [
      '../../../etc/passwd',
      'sub/../a.txt',
      '%2e%2e/%2e%2e/etc/passwd',
      '..%5C..%5Cx',
      '%2Fetc%2Fpasswd',
      `..%2F${u.userId}%2Fa.txt`,
      'a%00.txt',
    ]) {
      const r = await raw(u, `/api/v1/memory/files/${p}`);
      expect(r.status, p).toBe(400);
      expect(JSON.parse(r.body), p).toEqual({ error: TRAVERSAL_MESSAGE });
    }
    for (const p of ['..', '/..', 'sub/../..', '//etc', 'C:/x']) {
      const r = await get(u, `/api/v1/memory/files?path=${encodeURIComponent(p)}`);
      expect(r.status, p).toBe(400);
      expect(await json(r), p).toEqual({ error: TRAVERSAL_MESSAGE });
    }
  });

  it('blocks symbolic links that lead out of the user folder; links that stay inside work', async () => {
    for (const p of ['leak.txt', 'out/secret.txt']) {
      const r = await get(u, `/api/v1/memory/files/${p}`);
      expect(r.status, p).toBe(400);
      const body = await r.text();
      expect(JSON.parse(body)).toEqual({ error: TRAVERSAL_MESSAGE });
      expect(body).not.toContain('top secret');
    }
    const listed = await json(await get(u, '/api/v1/memory/files?recursive=true'));
    expect(listed.files.map((f: { path: string }) => f.path)).toEqual(['/a.txt', '/sub', '/sub/alias.txt']);
    expect((await json(await get(u, '/api/v1/memory/files/sub/alias.txt'))).content).toBe('inside');
  });

  it('refuses a file over 100 MB with 413, decided without reading it', async () => {
    const big = join(memoryDir(u), 'big.bin');
    await writeFile(big, '');
    await truncate(big, 100 * 1024 * 1024 + 1); // sparse
    const r = await get(u, '/api/v1/memory/files/big.bin');
    expect(r.status).toBe(413);
    expect(await json(r)).toEqual({ error: TOO_LARGE_MESSAGE });
  });
});

describe('the file tools in the memory scope', () => {
  let tools: Record<string, Tool>;
  let user: string;
  beforeAll(async () => {
    tools = Object.fromEntries(fileTools(new Workspace(root)).map((x) => [x.name, x]));
    user = (await registerUser(t.base, 'mem-tools')).userId;
  });
  const run = (name: string, args: Record<string, unknown>, userId?: string, sessionId?: string) =>
    tools[name].run(args, { signal: new AbortController().signal, userId, sessionId });
  const refusal = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  };

  it('declare a scope argument (session or memory, default session) and say what memory is for', () => {
    for (const x of Object.values(tools)) {
      expect((x.parameters.properties as Record<string, { enum?: string[]; default?: string }>).scope).toMatchObject({
        enum: ['session', 'memory'],
        default: 'session',
      });
      expect(x.description).toMatch(/memory/);
    }
  });

  it('without a user the memory scope is refused with a clear error (the session scope still needs a session)', async () => {
    const e = await refusal(run('file_list', { scope: 'memory' }, undefined, '6f1c1b7e-2a57-4c43-9b0a-3a4f6b3c2d10'));
    expect(e).toMatchObject({ kind: 'bad_arguments', message: NO_USER_MESSAGE });
    expect((await refusal(run('file_list', {}, user))).message).toMatch(/need a session/);
    expect((await refusal(run('file_list', { scope: 'elsewhere' }, user))).message).toBe("scope must be 'session' or 'memory'");
  });

  it('write, append, list and read in the memory without any session; traversal and links out refused', async () => {
    await run('file_write', { path: 'facts.md', content: 'one\n', scope: 'memory' }, user);
    await run('file_write', { path: 'facts.md', content: 'two\n', append: true, scope: 'memory' }, user);
    expect((await run('file_read', { path: '/facts.md', scope: 'memory' }, user)).text).toBe('one\ntwo\n');
    expect((await run('file_list', { scope: 'memory' }, user)).output).toMatchObject({
      path: '/',
      files: [expect.objectContaining({ path: '/facts.md', size: 8 })],
    });
    for (const p of ['../x.md', `../${user}/facts.md`, '../../escape.md']) {
      expect((await refusal(run('file_write', { path: p, content: 'x', scope: 'memory' }, user))).message).toBe(TRAVERSAL_MESSAGE);
    }
    await symlink(outside, join(root, 'memory', user, 'out'));
    expect((await refusal(run('file_write', { path: 'out/planted.md', content: 'x', scope: 'memory' }, user))).message).toBe(TRAVERSAL_MESSAGE);
    expect((await refusal(run('file_read', { path: 'out/secret.txt', scope: 'memory' }, user))).message).toBe(TRAVERSAL_MESSAGE);
  });

  it('a user id that is not a UUID names no folder', async () => {
    const e = await refusal(run('file_list', { scope: 'memory' }, '../../etc'));
    expect(e.message).toBe('memory needs a user: the user id is not a UUID');
  });
});

describe('openapi.json', () => {
  it('describes both memory routes and their bodies', async () => {
    const doc = await json(await fetch(`${t.base}/openapi.json`));
    expect(doc.paths['/api/v1/memory/files'].get.operationId).toBe('listMemoryFiles');
    expect(doc.paths['/api/v1/memory/files/{path}'].get.responses['413']).toBeDefined();
    expect(doc.components.schemas.MemoryFile.required).toEqual(['success', 'path', 'content', 'content_type', 'size_bytes', 'encoding']);
    expect(doc.components.schemas.MemoryListing.properties.files.items.required).toContain('size_bytes');
  });
});

describe('an anonymous caller (GATEWAY_SKIP_AUTH)', () => {
  let open: TestApp;
  beforeAll(async () => {
    open = await startTestApp({ WORKSPACE_ROOT: root, GATEWAY_SKIP_AUTH: '1' });
  });
  afterAll(async () => {
    await open?.stop();
  });

  it('has no memory: / lists empty (200), anything else is not found; path rules still apply', async () => {
    expect(await json(await fetch(`${open.base}/api/v1/memory/files`))).toEqual({ success: true, path: '/', files: [] });
    const sub = await fetch(`${open.base}/api/v1/memory/files?path=/prefs`);
    expect(sub.status).toBe(404);
    expect(await json(sub)).toEqual({ error: 'path not found' });
    const dl = await fetch(`${open.base}/api/v1/memory/files/prefs/style.md`);
    expect(dl.status).toBe(404);
    expect(await json(dl)).toEqual({ error: 'file not found' });
    const bad = await fetch(`${open.base}/api/v1/memory/files?path=${encodeURIComponent('../x')}`);
    expect(bad.status).toBe(400);
    expect(await json(bad)).toEqual({ error: TRAVERSAL_MESSAGE });
  });
});
