/**
 * Workspace files: GET /api/v1/sessions/{id}/files (listing) and /files/{path...} (download),
 * with authentication enforced. Files are created directly in `<WORKSPACE_ROOT>/<session UUID>`
 * (no agent writes files yet). Raw HTTP (node:http) is used where `fetch` would normalise the
 * URL (`..`, `%2e%2e`) before sending it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOO_LARGE_MESSAGE, TRAVERSAL_MESSAGE, Workspace, WORKSPACE_MAX_FILE_BYTES, detectContentType, parseWorkspacePath } from '../src/workspace/index.js';
import { json, startTestApp, waitFor, type TestApp } from './helpers/app.js';

const SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';
let t: TestApp;
let root: string;
let outside: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ws-root-'));
  outside = await mkdtemp(join(tmpdir(), 'ws-outside-'));
  await writeFile(join(outside, 'secret.txt'), 'top secret');
  t = await startTestApp({ GATEWAY_SKIP_AUTH: '0', JWT_SECRET: SECRET, PASSWORD_SCRYPT_N: '1024', RATE_LIMIT_REQUESTS: '100000', WORKSPACE_ROOT: root });
});
afterAll(async () => {
  await t?.stop();
  if (root) await rm(root, { recursive: true, force: true });
  if (outside) await rm(outside, { recursive: true, force: true });
});

interface User {
  key: string;
}
async function register(): Promise<User> {
  const r = await fetch(`${t.base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `ws-${randomUUID()}@example.com`, password: 'correct horse battery', name: 'Ws' }),
  });
  expect(r.status).toBe(201);
  return { key: (await json(r)).api_key };
}

/** A session of `u` (created by submitting a task); its folder is created unless told not to. */
async function newSession(u: User, opts: { mkdir?: boolean } = {}) {
  const external = `ws-${randomUUID()}`;
  const r = await fetch(`${t.base}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': u.key },
    body: JSON.stringify({ query: 'hello', session_id: external }),
  });
  expect(r.status).toBe(200);
  const s = await json(await fetch(`${t.base}/api/v1/sessions/${external}`, { headers: { 'x-api-key': u.key } }));
  // The session's UUID is its id (session_id reports the name the client gave it).
  expect(s.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(s.session_id).toBe(external);
  const dir = join(root, s.id);
  if (opts.mkdir !== false) await mkdir(dir);
  return { id: s.id as string, external, dir };
}

const get = (u: User | undefined, path: string) => fetch(t.base + path, { headers: u ? { 'x-api-key': u.key } : {} });

/** GET with the path sent exactly as written. */
function raw(u: User, path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const url = new URL(t.base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET', headers: { 'x-api-key': u.key } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function entry(dir: string, rel: string, isDir: boolean) {
  const st = await stat(join(dir, rel));
  return { name: rel.split('/').pop(), path: '/' + rel, size: isDir ? 0 : st.size, is_dir: isDir, modified_at: st.mtime.toISOString() };
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);

describe('listing', () => {
  let u: User;
  let s: Awaited<ReturnType<typeof newSession>>;
  beforeAll(async () => {
    u = await register();
    s = await newSession(u);
    await mkdir(join(s.dir, 'sub/deep'), { recursive: true });
    await mkdir(join(s.dir, 'a-dir'));
    await writeFile(join(s.dir, 'b.txt'), 'hello');
    await writeFile(join(s.dir, 'sub/report.json'), '{"a":1}');
    await writeFile(join(s.dir, 'sub/deep/c.bin'), Buffer.from([0, 1, 2, 3, 4, 5, 6]));
    await writeFile(join(s.dir, 'sub-file.md'), '# hi');
  });

  it('lists the root one level deep with the exact entry fields, sorted by path', async () => {
    const r = await get(u, `/api/v1/sessions/${s.external}/files`);
    expect(r.status).toBe(200);
    const body = await json(r);
    expect(Object.keys(body).sort()).toEqual(['files', 'path', 'session_id']);
    expect(body.session_id).toBe(s.id);
    expect(body.path).toBe('/');
    expect(body.files).toEqual([
      await entry(s.dir, 'a-dir', true),
      await entry(s.dir, 'b.txt', false),
      await entry(s.dir, 'sub', true),
      await entry(s.dir, 'sub-file.md', false),
    ]);
    expect(body.files[1].size).toBe(5);
  });

  it('lists a subdirectory (with or without the leading slash) and by session UUID', async () => {
    for (const p of ['/sub', 'sub', '/sub/', '/./sub']) {
      const r = await get(u, `/api/v1/sessions/${s.id}/files?path=${encodeURIComponent(p)}`);
      expect(r.status, p).toBe(200);
      const body = await json(r);
      expect(body.path).toBe('/sub');
      expect(body.files).toEqual([await entry(s.dir, 'sub/deep', true), await entry(s.dir, 'sub/report.json', false)]);
    }
  });

  it('lists recursively: every entry, each directory directly followed by its contents', async () => {
    const r = await get(u, `/api/v1/sessions/${s.id}/files?path=/&recursive=true`);
    expect(r.status).toBe(200);
    const body = await json(r);
    expect(body.files.map((f: { path: string }) => f.path)).toEqual([
      '/a-dir',
      '/b.txt',
      '/sub',
      '/sub/deep',
      '/sub/deep/c.bin',
      '/sub/report.json',
      '/sub-file.md',
    ]);
    expect(body.files[4]).toEqual(await entry(s.dir, 'sub/deep/c.bin', false));
    const sub = await json(await get(u, `/api/v1/sessions/${s.id}/files?path=/sub&recursive=1`));
    expect(sub.files.map((f: { path: string }) => f.path)).toEqual(['/sub/deep', '/sub/deep/c.bin', '/sub/report.json']);
    const flat = await json(await get(u, `/api/v1/sessions/${s.id}/files?recursive=false`));
    expect(flat.files).toHaveLength(4);
  });

  it('answers 404 for a missing directory, 400 for a file as path and for a bad recursive flag', async () => {
    const miss = await get(u, `/api/v1/sessions/${s.id}/files?path=/nope`);
    expect(miss.status).toBe(404);
    expect(await json(miss)).toEqual({ error: 'path not found' });
    const file = await get(u, `/api/v1/sessions/${s.id}/files?path=/b.txt`);
    expect(file.status).toBe(400);
    expect(await json(file)).toEqual({ error: 'path is not a directory' });
    const bad = await get(u, `/api/v1/sessions/${s.id}/files?recursive=maybe`);
    expect(bad.status).toBe(400);
    expect(await json(bad)).toEqual({ error: 'recursive must be a boolean' });
  });

  it('lists a session without a workspace folder yet as empty; its subpaths and files are 404', async () => {
    const fresh = await newSession(u, { mkdir: false });
    const r = await get(u, `/api/v1/sessions/${fresh.external}/files`);
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({ session_id: fresh.id, path: '/', files: [] });
    expect((await get(u, `/api/v1/sessions/${fresh.id}/files?path=/x`)).status).toBe(404);
    const dl = await get(u, `/api/v1/sessions/${fresh.id}/files/x.txt`);
    expect(dl.status).toBe(404);
    expect(await json(dl)).toEqual({ error: 'file not found' });
  });

  it('answers 404 for an unknown session', async () => {
    const r = await get(u, `/api/v1/sessions/${randomUUID()}/files`);
    expect(r.status).toBe(404);
    expect(await json(r)).toEqual({ error: 'Session not found' });
  });
});

describe('download', () => {
  let u: User;
  let s: Awaited<ReturnType<typeof newSession>>;
  beforeAll(async () => {
    u = await register();
    s = await newSession(u);
  });

  it('detects the content type from the content, not the name, and sends the exact bytes', async () => {
    const webp = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WEBPVP8 ')]);
    const cases: [string, Buffer, string][] = [
      ['image.txt', PNG, 'image/png'],
      ['photo.png', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]), 'image/jpeg'],
      ['anim.bin', Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'), 'image/gif'],
      ['pic', webp, 'image/webp'],
      ['doc.txt', Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1'), 'application/pdf'],
      ['archive.json', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0]), 'application/zip'],
      ['data.txt', gzipSync('hello'), 'application/gzip'],
      ['notes.png', Buffer.from('héllo wörld ✓\n'), 'text/plain; charset=utf-8'],
      ['data.bin', Buffer.from(' \n{"a": [1, 2, {"b": null}]}\n'), 'application/json'],
      ['list', Buffer.from('[1,2,3]'), 'application/json'],
      ['broken.json', Buffer.from('{"a": '), 'text/plain; charset=utf-8'],
      ['latin1.txt', Buffer.from([0x68, 0xe9, 0x6c, 0x6c, 0x6f]), 'application/octet-stream'],
      ['nul.txt', Buffer.from([0x61, 0x00, 0x62]), 'application/octet-stream'],
      ['empty.txt', Buffer.alloc(0), 'text/plain; charset=utf-8'],
    ];
    for (const [name, bytes] of cases) await writeFile(join(s.dir, name), bytes);
    for (const [name, bytes, type] of cases) {
      const r = await get(u, `/api/v1/sessions/${s.external}/files/${name}`);
      expect(r.status, name).toBe(200);
      expect(r.headers.get('content-type'), name).toBe(type);
      expect(r.headers.get('content-length'), name).toBe(String(bytes.length));
      expect(Buffer.from(await r.arrayBuffer()).equals(bytes), name).toBe(true);
    }
  });

  it('downloads nested files and names that need percent-encoding', async () => {
    await mkdir(join(s.dir, 'reports/2024'), { recursive: true });
    await writeFile(join(s.dir, 'reports/2024/q1 summary ü.md'), '# Q1');
    const r = await get(u, `/api/v1/sessions/${s.id}/files/reports/2024/${encodeURIComponent('q1 summary ü.md')}`);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('# Q1');
    const listed = await json(await get(u, `/api/v1/sessions/${s.id}/files?path=/reports/2024`));
    expect(listed.files[0]).toMatchObject({ name: 'q1 summary ü.md', path: '/reports/2024/q1 summary ü.md', size: 4, is_dir: false });
  });

  it('answers 404 for a missing file and for a directory', async () => {
    await mkdir(join(s.dir, 'folder'), { recursive: true });
    const miss = await get(u, `/api/v1/sessions/${s.id}/files/nope.txt`);
    expect(miss.status).toBe(404);
    expect(await json(miss)).toEqual({ error: 'file not found' });
    for (const p of ['folder', 'folder/', '']) {
      const dir = await get(u, `/api/v1/sessions/${s.id}/files/${p}`);
      expect(dir.status, p).toBe(404);
      expect(await json(dir)).toEqual({ error: 'path is a directory' });
    }
  });

  it('streams a large file exactly (back-pressure path) with its Content-Length', async () => {
    const big = randomBytes(6 * 1024 * 1024 + 123);
    await writeFile(join(s.dir, 'big.bin'), big);
    const r = await get(u, `/api/v1/sessions/${s.id}/files/big.bin`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-length')).toBe(String(big.length));
    expect(r.headers.get('content-type')).toBe('application/octet-stream');
    // Read slowly at first so the server meets a full socket buffer.
    const reader = r.body!.getReader();
    const parts: Buffer[] = [];
    let n = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parts.push(Buffer.from(value));
      if (n++ < 5) await new Promise((res) => setTimeout(res, 20));
    }
    expect(Buffer.concat(parts).equals(big)).toBe(true);

    const text = Buffer.from('line of text ✓\n'.repeat(200_000));
    await writeFile(join(s.dir, 'big.log'), text);
    const tr = await get(u, `/api/v1/sessions/${s.id}/files/big.log`);
    expect(tr.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(Buffer.from(await tr.arrayBuffer()).equals(text)).toBe(true);
  });

  it('closes the file when the client aborts mid-stream, and keeps serving', async () => {
    const file = join(s.dir, 'huge.bin');
    await writeFile(file, '');
    await truncate(file, 64 * 1024 * 1024);
    const ac = new AbortController();
    const r = await fetch(`${t.base}/api/v1/sessions/${s.id}/files/huge.bin`, { headers: { 'x-api-key': u.key }, signal: ac.signal });
    expect(r.status).toBe(200);
    await r.body!.getReader().read();
    ac.abort();
    const openOnFile = () => {
      try {
        return readdirSync('/proc/self/fd').filter((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`).endsWith('huge.bin');
          } catch {
            return false;
          }
        }).length;
      } catch {
        return 0; // no /proc: nothing to check
      }
    };
    await waitFor(async () => openOnFile() === 0, 10_000);
    const again = await get(u, `/api/v1/sessions/${s.id}/files?path=/`);
    expect(again.status).toBe(200);
  });

  it('refuses a file over 100 MB with 413 without reading it (sparse file)', async () => {
    const file = join(s.dir, 'too-big.bin');
    await writeFile(file, '');
    await truncate(file, WORKSPACE_MAX_FILE_BYTES + 1);
    const r = await get(u, `/api/v1/sessions/${s.id}/files/too-big.bin`);
    expect(r.status).toBe(413);
    expect(await json(r)).toEqual({ error: 'file exceeds maximum size limit (100MB)' });
    // The listing still shows it.
    const listed = await json(await get(u, `/api/v1/sessions/${s.id}/files`));
    expect(listed.files.find((f: { name: string }) => f.name === 'too-big.bin').size).toBe(WORKSPACE_MAX_FILE_BYTES + 1);
  });
});

describe('path rules', () => {
  let u: User;
  let s: Awaited<ReturnType<typeof newSession>>;
  beforeAll(async () => {
    u = await register();
    s = await newSession(u);
    await mkdir(join(s.dir, 'sub'));
    await writeFile(join(s.dir, 'a.txt'), 'inside');
    await writeFile(join(s.dir, 'sub/b.txt'), 'inside b');
    await symlink(outside, join(s.dir, 'out'));
    await symlink(join(outside, 'secret.txt'), join(s.dir, 'leak.txt'));
    await symlink('../a.txt', join(s.dir, 'sub/alias.txt'));
    await symlink('sub', join(s.dir, 'sublink'));
    await symlink(join(s.dir, 'nowhere'), join(s.dir, 'dangling'));
  });

  it('refuses `..`, encoded `..` and absolute paths on download with 400', async () => {
    const base = `/api/v1/sessions/${s.id}/files`;
    for (const p of [
      '../../../etc/passwd',
      'sub/../a.txt',
      'sub/..',
      '%2e%2e/%2e%2e/etc/passwd',
      '%2E%2E%2F%2E%2E%2Fetc%2Fpasswd',
      'sub%2F..%2F..%2Fx',
      '..%5C..%5Cwindows',
      '%2Fetc%2Fpasswd',
      '/etc/passwd',
      '%5Cetc',
      'C:%5Cwindows',
      'a%00.txt',
    ]) {
      const r = await raw(u, `${base}/${p}`);
      expect(r.status, p).toBe(400);
      expect(JSON.parse(r.body.toString()), p).toEqual({ error: TRAVERSAL_MESSAGE });
    }
  });

  it('refuses `..` and absolute paths in the listing path with 400', async () => {
    for (const p of ['..', '/..', '/sub/../..', 'sub/..', '//etc', '\\etc', 'C:/x', '..\\x']) {
      const r = await get(u, `/api/v1/sessions/${s.id}/files?path=${encodeURIComponent(p)}`);
      expect(r.status, p).toBe(400);
      expect(await json(r), p).toEqual({ error: TRAVERSAL_MESSAGE });
    }
  });

  it('blocks symbolic links that point outside the workspace', async () => {
    for (const p of ['leak.txt', 'out/secret.txt']) {
      const r = await get(u, `/api/v1/sessions/${s.id}/files/${p}`);
      expect(r.status, p).toBe(400);
      const body = await r.text();
      expect(JSON.parse(body)).toEqual({ error: TRAVERSAL_MESSAGE });
      expect(body).not.toContain('top secret');
    }
    const l = await get(u, `/api/v1/sessions/${s.id}/files?path=/out`);
    expect(l.status).toBe(400);
    expect(await json(l)).toEqual({ error: TRAVERSAL_MESSAGE });
    const root = await json(await get(u, `/api/v1/sessions/${s.id}/files?recursive=true`));
    const paths = root.files.map((f: { path: string }) => f.path);
    expect(paths).not.toContain('/out');
    expect(paths).not.toContain('/leak.txt');
    expect(paths).not.toContain('/dangling');
  });

  it('follows symbolic links that stay inside', async () => {
    const r = await get(u, `/api/v1/sessions/${s.id}/files/sub/alias.txt`);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('inside');
    const viaDir = await get(u, `/api/v1/sessions/${s.id}/files/sublink/b.txt`);
    expect(await viaDir.text()).toBe('inside b');
    const listed = await json(await get(u, `/api/v1/sessions/${s.id}/files?path=/sublink`));
    expect(listed.path).toBe('/sublink');
    expect(listed.files.map((f: { path: string }) => f.path)).toEqual(['/sublink/alias.txt', '/sublink/b.txt']);
    const all = await json(await get(u, `/api/v1/sessions/${s.id}/files?recursive=true`));
    expect(all.files.map((f: { path: string }) => f.path)).toEqual(['/a.txt', '/sub', '/sub/alias.txt', '/sub/b.txt', '/sublink']);
    expect(all.files.find((f: { path: string }) => f.path === '/sublink')).toMatchObject({ is_dir: true, size: 0 });
    expect(all.files.find((f: { path: string }) => f.path === '/sub/alias.txt')).toMatchObject({ is_dir: false, size: 6 });
  });
});

describe('ownership', () => {
  it("hides another owner's session, a deleted session and requires credentials", async () => {
    const a = await register();
    const b = await register();
    const s = await newSession(a);
    await writeFile(join(s.dir, 'mine.txt'), 'for a only');
    expect((await get(a, `/api/v1/sessions/${s.id}/files/mine.txt`)).status).toBe(200);
    for (const id of [s.id, s.external]) {
      for (const p of [`/api/v1/sessions/${id}/files`, `/api/v1/sessions/${id}/files/mine.txt`]) {
        const r = await get(b, p);
        expect(r.status, p).toBe(404);
        expect(await json(r)).toEqual({ error: 'Session not found' });
      }
    }
    const anon = await get(undefined, `/api/v1/sessions/${s.id}/files/mine.txt`);
    expect(anon.status).toBe(401);
    expect((await get(undefined, `/api/v1/sessions/${s.id}/files`)).status).toBe(401);

    const del = await fetch(`${t.base}/api/v1/sessions/${s.id}`, { method: 'DELETE', headers: { 'x-api-key': a.key } });
    expect(del.status).toBe(204);
    for (const p of [`/api/v1/sessions/${s.id}/files`, `/api/v1/sessions/${s.id}/files/mine.txt`]) {
      const r = await get(a, p);
      expect(r.status, p).toBe(404);
      expect(await json(r)).toEqual({ error: 'Session not found' });
    }
    expect(await readFile(join(s.dir, 'mine.txt'), 'utf8')).toBe('for a only');
  });
});

describe('workspace module', () => {
  it('applies a lowered size cap exactly at the boundary', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ws-unit-'));
    try {
      const id = randomUUID();
      await mkdir(join(dir, id));
      await writeFile(join(dir, id, 'ten.bin'), Buffer.alloc(10, 1));
      await writeFile(join(dir, id, 'eleven.bin'), Buffer.alloc(11, 1));
      const w = new Workspace(dir, { maxFileBytes: 10 });
      const f = await w.openFile(id, ['ten.bin']);
      expect(f.size).toBe(10);
      await f.fh.close();
      await expect(w.openFile(id, ['eleven.bin'])).rejects.toThrow(TOO_LARGE_MESSAGE);
      const capped = await new Workspace(dir, { maxListEntries: 1 }).list(id, [], false);
      expect(capped.files).toHaveLength(1);
      expect(capped.truncated).toBe(true);
      expect(() => w.dirFor('../etc')).toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('parses client paths', () => {
    expect(parseWorkspacePath('/', { allowLeadingSlash: true })).toEqual([]);
    expect(parseWorkspacePath('/a//b/./c/', { allowLeadingSlash: true })).toEqual(['a', 'b', 'c']);
    expect(parseWorkspacePath('a..b/..c', { allowLeadingSlash: false })).toEqual(['a..b', '..c']);
    expect(() => parseWorkspacePath('/a', { allowLeadingSlash: false })).toThrow(TRAVERSAL_MESSAGE);
    expect(() => parseWorkspacePath('a/../b', { allowLeadingSlash: true })).toThrow(TRAVERSAL_MESSAGE);
  });

  it('classifies a prefix of a large file without JSON and tolerates a cut multi-byte character', () => {
    const cut = Buffer.from('ab✓').subarray(0, 4);
    expect(detectContentType(cut, false)).toBe('text/plain; charset=utf-8');
    expect(detectContentType(cut, true)).toBe('application/octet-stream');
    expect(detectContentType(Buffer.from('{"a":1}'), false)).toBe('text/plain; charset=utf-8');
  });
});
