/**
 * The file tools (src/tools/files.ts) and the workspace's write/read-text additions, against a
 * temporary workspace root. A second `Workspace` on the same root stands for the HTTP files API
 * (the gateway builds its own from WORKSPACE_ROOT), so what an agent writes is shown to be listed
 * and downloadable there.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { mkdir, mkdtemp, readFile, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FILE_READ_DEFAULT_BYTES, FILE_READ_MAX_BYTES, fileTools } from '../src/tools/files.js';
import { type Tool, type ToolContext, ToolError } from '../src/tools/tool.js';
import { TOO_LARGE_MESSAGE, TRAVERSAL_MESSAGE, Workspace, detectContentType } from '../src/workspace/index.js';

/** Runs once just before the next `open` of node:fs/promises (to swap a path under the workspace). */
const hooks = vi.hoisted(() => ({ beforeOpen: undefined as undefined | (() => Promise<void>) }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  const open: typeof actual.open = async (...args) => {
    const hook = hooks.beforeOpen;
    hooks.beforeOpen = undefined;
    if (hook) await hook();
    return actual.open(...args);
  };
  return { ...actual, open, default: { ...actual, open } };
});

let root: string;
let outside: string;
let ws: Workspace;
let tools: Record<string, Tool>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tools-files-root-'));
  outside = await mkdtemp(join(tmpdir(), 'tools-files-outside-'));
  await writeFile(join(outside, 'secret.txt'), 'top secret');
  ws = new Workspace(root);
  tools = Object.fromEntries(fileTools(ws).map((t) => [t.name, t]));
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  if (outside) await rm(outside, { recursive: true, force: true });
});

const ctx = (sessionId: string | undefined): ToolContext => ({ signal: new AbortController().signal, sessionId });
const call = (name: string, sessionId: string | undefined, args: Record<string, unknown>) => tools[name].run(args, ctx(sessionId));

async function refused(p: Promise<unknown>, kind: ToolError['kind'], message: string | RegExp): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected a ToolError').toBeInstanceOf(ToolError);
  expect((err as ToolError).kind).toBe(kind);
  if (typeof message === 'string') expect((err as ToolError).message).toBe(message);
  else expect((err as ToolError).message).toMatch(message);
}

/** A session whose folder exists (most tests); `sessionDir` is its path. */
async function session(): Promise<{ id: string; dir: string }> {
  const id = randomUUID();
  const dir = join(root, id);
  await mkdir(dir);
  return { id, dir };
}

describe('file tools: declarations', () => {
  it('are file_read, file_write and file_list in category file, not dangerous; only the writer is not retryable', () => {
    const list = fileTools(ws);
    expect(list.map((t) => t.name)).toEqual(['file_read', 'file_write', 'file_list']);
    for (const t of list) {
      expect(t.category).toBe('file');
      expect(t.dangerous).toBe(false);
      expect(t.parameters.type).toBe('object');
    }
    expect(list.map((t) => t.retryable)).toEqual([true, false, true]);
    expect(tools.file_read.parameters.required).toEqual(['path']);
    expect(tools.file_write.parameters.required).toEqual(['path', 'content']);
    expect(tools.file_read.parameters.properties.max_bytes).toMatchObject({ default: 256 * 1024, maximum: 1024 * 1024 });
  });
});

describe('file tools: write, read, list', () => {
  it('writes a file (creating the session folder and parents), reads it back and lists it', async () => {
    const id = randomUUID();
    expect(existsSync(join(root, id))).toBe(false);
    const w = await call('file_write', id, { path: '/notes/deep/a.md', content: 'héllo ✓\n' });
    expect(w.output).toMatchObject({ path: '/notes/deep/a.md', size: Buffer.byteLength('héllo ✓\n'), appended: false });
    expect(await readFile(join(root, id, 'notes/deep/a.md'), 'utf8')).toBe('héllo ✓\n');

    for (const p of ['/notes/deep/a.md', 'notes/deep/a.md', './notes//deep/a.md']) {
      const r = await call('file_read', id, { path: p });
      expect(r.output, p).toEqual({ path: '/notes/deep/a.md', content: 'héllo ✓\n', size: Buffer.byteLength('héllo ✓\n'), truncated: false });
      expect(r.text).toBe('héllo ✓\n');
    }

    const top = await call('file_list', id, {});
    expect(top.output.path).toBe('/');
    expect((top.output.files as { path: string }[]).map((f) => f.path)).toEqual(['/notes']);
    const all = await call('file_list', id, { path: '/', recursive: true });
    expect((all.output.files as { path: string; is_dir: boolean }[]).map((f) => [f.path, f.is_dir])).toEqual([
      ['/notes', true],
      ['/notes/deep', true],
      ['/notes/deep/a.md', false],
    ]);
    const sub = await call('file_list', id, { path: 'notes/deep' });
    expect(sub.output.files).toMatchObject([{ name: 'a.md', path: '/notes/deep/a.md', size: Buffer.byteLength('héllo ✓\n'), is_dir: false }]);
    expect(sub.text).toContain('/notes/deep/a.md');
  });

  it('lists an empty (not yet created) workspace as empty, and refuses a missing folder or a file as folder', async () => {
    const id = randomUUID();
    const r = await call('file_list', id, { path: '/' });
    expect(r.output.files).toEqual([]);
    await refused(call('file_list', id, { path: '/nope' }), 'bad_arguments', 'path not found');
    await call('file_write', id, { path: 'f.txt', content: 'x' });
    await refused(call('file_list', id, { path: '/f.txt' }), 'bad_arguments', 'path is not a directory');
  });

  it('appends, and a plain write replaces the whole file (a shorter content leaves nothing behind)', async () => {
    const { id, dir } = await session();
    await call('file_write', id, { path: 'log.txt', content: 'one\n' });
    const a = await call('file_write', id, { path: 'log.txt', content: 'two\n', append: true });
    expect(a.output).toMatchObject({ path: '/log.txt', size: 8, bytes_written: 4, appended: true });
    expect(await readFile(join(dir, 'log.txt'), 'utf8')).toBe('one\ntwo\n');
    // Appending to a file that does not exist creates it.
    await call('file_write', id, { path: 'new/log.txt', content: 'first', append: true });
    expect(await readFile(join(dir, 'new/log.txt'), 'utf8')).toBe('first');
    const w = await call('file_write', id, { path: 'log.txt', content: 'x' });
    expect(w.output.size).toBe(1);
    expect(await readFile(join(dir, 'log.txt'), 'utf8')).toBe('x');
    // Empty content empties the file.
    await call('file_write', id, { path: 'log.txt', content: '' });
    expect(await readFile(join(dir, 'log.txt'), 'utf8')).toBe('');
  });

  it('a file the agent writes is listed and downloadable through the Workspace the HTTP files API uses', async () => {
    const id = randomUUID();
    await call('file_write', id, { path: '/reports/summary.json', content: '{"ok":true}' });
    const api = new Workspace(root); // as the gateway builds it from WORKSPACE_ROOT
    const listing = await api.list(id, [], true);
    expect(listing.files.map((f) => f.path)).toEqual(['/reports', '/reports/summary.json']);
    expect(listing.files[1]).toMatchObject({ name: 'summary.json', size: 11, is_dir: false });
    const opened = await api.openFile(id, ['reports', 'summary.json']);
    try {
      expect(opened.size).toBe(11);
      const body = await opened.fh.readFile();
      expect(body.toString('utf8')).toBe('{"ok":true}');
      expect(detectContentType(body, true)).toBe('application/json');
    } finally {
      await opened.fh.close();
    }
  });

  it('reads a file through a link that stays inside, and writes through it to its target', async () => {
    const { id, dir } = await session();
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'a.txt'), 'A');
    await symlink('../a.txt', join(dir, 'sub/alias.txt'));
    await symlink('sub', join(dir, 'sublink'));
    expect((await call('file_read', id, { path: 'sub/alias.txt' })).output.content).toBe('A');
    await call('file_write', id, { path: 'sub/alias.txt', content: 'B' });
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('B');
    await call('file_write', id, { path: 'sublink/c.txt', content: 'C' });
    expect(await readFile(join(dir, 'sub/c.txt'), 'utf8')).toBe('C');
  });
});

describe('file tools: containment', () => {
  it('refuses ".." and absolute paths with the traversal message, for every tool', async () => {
    const { id } = await session();
    const bad = ['../x', '../../etc/passwd', 'a/../../x', '..', '//etc/passwd', '\\etc\\passwd', 'a\\..\\..\\x', 'C:\\Windows\\x', 'C:/x', 'a\0b'];
    for (const p of bad) {
      await refused(call('file_read', id, { path: p }), 'bad_arguments', TRAVERSAL_MESSAGE);
      await refused(call('file_write', id, { path: p, content: 'pwned' }), 'bad_arguments', TRAVERSAL_MESSAGE);
      await refused(call('file_list', id, { path: p }), 'bad_arguments', TRAVERSAL_MESSAGE);
    }
    expect(existsSync(join(root, 'x'))).toBe(false);
  });

  it('a single leading slash means the workspace root: /etc/passwd is the workspace file, never the host one', async () => {
    const { id, dir } = await session();
    await refused(call('file_read', id, { path: '/etc/passwd' }), 'bad_arguments', 'file not found');
    // An absolute host path is taken as a path inside the workspace.
    const target = join(outside, 'planted.txt');
    await call('file_write', id, { path: target, content: 'inside' });
    expect(existsSync(target)).toBe(false);
    expect(await readFile(join(dir, target), 'utf8')).toBe('inside');
  });

  it('refuses a link to a file outside, for reading and for writing (the target is left untouched)', async () => {
    const { id, dir } = await session();
    await symlink(join(outside, 'secret.txt'), join(dir, 'leak.txt'));
    await refused(call('file_read', id, { path: 'leak.txt' }), 'bad_arguments', TRAVERSAL_MESSAGE);
    await refused(call('file_write', id, { path: 'leak.txt', content: 'pwned' }), 'bad_arguments', TRAVERSAL_MESSAGE);
    await refused(call('file_write', id, { path: 'leak.txt', content: 'pwned', append: true }), 'bad_arguments', TRAVERSAL_MESSAGE);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  it('refuses a dangling link (writing would create its target, wherever it points)', async () => {
    const { id, dir } = await session();
    await symlink(join(outside, 'created-by-link.txt'), join(dir, 'dangling.txt'));
    await refused(call('file_write', id, { path: 'dangling.txt', content: 'pwned' }), 'bad_arguments', TRAVERSAL_MESSAGE);
    expect(existsSync(join(outside, 'created-by-link.txt'))).toBe(false);
    await refused(call('file_read', id, { path: 'dangling.txt' }), 'bad_arguments', 'file not found');
  });

  it('refuses writing, reading and listing through a linked directory that leads outside', async () => {
    const { id, dir } = await session();
    await symlink(outside, join(dir, 'out'));
    await refused(call('file_write', id, { path: 'out/new.txt', content: 'pwned' }), 'bad_arguments', TRAVERSAL_MESSAGE);
    await refused(call('file_write', id, { path: 'out/deeper/new.txt', content: 'pwned' }), 'bad_arguments', TRAVERSAL_MESSAGE);
    await refused(call('file_write', id, { path: 'out/secret.txt', content: 'pwned' }), 'bad_arguments', TRAVERSAL_MESSAGE);
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'deeper'))).toBe(false);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
    await refused(call('file_read', id, { path: 'out/secret.txt' }), 'bad_arguments', TRAVERSAL_MESSAGE);
    await refused(call('file_list', id, { path: 'out' }), 'bad_arguments', TRAVERSAL_MESSAGE);
  });

  it('refuses writing over a directory or the root, and below a file', async () => {
    const { id, dir } = await session();
    await mkdir(join(dir, 'folder'));
    await writeFile(join(dir, 'plain.txt'), 'p');
    await refused(call('file_write', id, { path: 'folder', content: 'x' }), 'bad_arguments', 'path is a directory');
    await refused(call('file_write', id, { path: '/', content: 'x' }), 'bad_arguments', 'path is a directory');
    await refused(call('file_write', id, { path: 'plain.txt/x.txt', content: 'x' }), 'bad_arguments', 'path is not a directory');
    await refused(call('file_read', id, { path: 'folder' }), 'bad_arguments', 'path is a directory');
    expect(await readFile(join(dir, 'plain.txt'), 'utf8')).toBe('p');
  });

  it('a parent swapped for a link to the outside between the checks and the open is caught before writing', async () => {
    const { id, dir } = await session();
    await mkdir(join(dir, 'sub'));
    await writeFile(join(outside, 'race-existing.txt'), 'untouched');
    for (const name of ['race-new.txt', 'race-existing.txt']) {
      await rm(join(dir, 'sub'), { recursive: true, force: true });
      await mkdir(join(dir, 'sub'));
      hooks.beforeOpen = async () => {
        await rename(join(dir, 'sub'), join(dir, `sub-${name}`));
        await symlink(outside, join(dir, 'sub'));
      };
      await refused(call('file_write', id, { path: `sub/${name}`, content: 'pwned' }), 'bad_arguments', TRAVERSAL_MESSAGE);
      expect(hooks.beforeOpen, 'the swap ran').toBeUndefined();
    }
    // A file created out there by the open is removed again; an existing one is not written.
    expect(existsSync(join(outside, 'race-new.txt'))).toBe(false);
    expect(await readFile(join(outside, 'race-existing.txt'), 'utf8')).toBe('untouched');
  });

  it('Workspace.writeFile checks raw segments too (callers other than the tools)', async () => {
    const { id } = await session();
    for (const segs of [['..', 'x'], ['a/b'], ['a\\..'], [''], ['.']]) {
      await expect(ws.writeFile(id, segs, 'x'), JSON.stringify(segs)).rejects.toThrow(TRAVERSAL_MESSAGE);
    }
  });
});

describe('file tools: sessions and arguments', () => {
  it('need a session', async () => {
    // The words the model and the API client read, not the constant that holds them.
    const noSession = 'file tools need a session: submit the task with a session_id';
    await refused(call('file_read', undefined, { path: 'a.txt' }), 'bad_arguments', noSession);
    await refused(call('file_write', undefined, { path: 'a.txt', content: 'x' }), 'bad_arguments', noSession);
    await refused(call('file_list', undefined, {}), 'bad_arguments', noSession);
    expect(existsSync(join(root, 'a.txt'))).toBe(false);
  });

  it('keep sessions apart', async () => {
    const a = await session();
    const b = await session();
    await call('file_write', a.id, { path: 'mine.txt', content: 'a' });
    // The control: the same reads and listing succeed in the session that owns the file.
    expect((await call('file_read', a.id, { path: 'mine.txt' })).output).toMatchObject({ path: '/mine.txt', content: 'a' });
    expect(JSON.stringify((await call('file_list', a.id, {})).output)).toContain('mine.txt');
    await refused(call('file_read', b.id, { path: 'mine.txt' }), 'bad_arguments', 'file not found');
    await refused(call('file_read', b.id, { path: `../${a.id}/mine.txt` }), 'bad_arguments', TRAVERSAL_MESSAGE);
    expect(JSON.stringify((await call('file_list', b.id, {})).output)).not.toContain('mine.txt');
  });

  it('refuse malformed arguments', async () => {
    const { id } = await session();
    await refused(call('file_read', id, {}), 'bad_arguments', 'path is required');
    await refused(call('file_write', id, { path: 'a.txt' }), 'bad_arguments', 'content must be a string');
    await refused(call('file_write', id, { path: 'a.txt', content: 'x', append: 'yes' }), 'bad_arguments', 'append must be a boolean');
    await refused(call('file_read', id, { path: 'a.txt', max_bytes: 0 }), 'bad_arguments', /max_bytes/);
  });
});

describe('file tools: sizes and content', () => {
  it('file_read returns max_bytes at most (default 256 KB, never more than 1 MB), marked truncated', async () => {
    const { id, dir } = await session();
    await writeFile(join(dir, 'ten.txt'), '0123456789');
    const r = await call('file_read', id, { path: 'ten.txt', max_bytes: 4 });
    expect(r.output).toEqual({ path: '/ten.txt', content: '0123', size: 10, truncated: true });
    expect(r.text).toContain('[truncated');
    const exact = await call('file_read', id, { path: 'ten.txt', max_bytes: 10 });
    expect(exact.output).toMatchObject({ content: '0123456789', truncated: false });

    await writeFile(join(dir, 'big.txt'), 'a'.repeat(FILE_READ_MAX_BYTES + 500_000));
    const dflt = await call('file_read', id, { path: 'big.txt' });
    expect((dflt.output.content as string).length).toBe(FILE_READ_DEFAULT_BYTES);
    expect(dflt.output).toMatchObject({ size: FILE_READ_MAX_BYTES + 500_000, truncated: true });
    const clamped = await call('file_read', id, { path: 'big.txt', max_bytes: 10 * FILE_READ_MAX_BYTES });
    expect((clamped.output.content as string).length).toBe(FILE_READ_MAX_BYTES);
  });

  it('a cut inside a multi-byte character drops that character instead of failing', async () => {
    const { id, dir } = await session();
    await writeFile(join(dir, 'u.txt'), 'aé'); // é is 2 bytes
    const r = await call('file_read', id, { path: 'u.txt', max_bytes: 2 });
    expect(r.output).toMatchObject({ content: 'a', size: 3, truncated: true });
  });

  it('refuses binary content (NUL bytes, invalid UTF-8) instead of returning garbage', async () => {
    const { id, dir } = await session();
    await writeFile(join(dir, 'nul.bin'), Buffer.from([0x68, 0x69, 0x00, 0x21]));
    await writeFile(join(dir, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x21])); // "café!" in Latin-1
    const binary = 'file is not UTF-8 text (binary content)';
    await refused(call('file_read', id, { path: 'nul.bin' }), 'bad_arguments', binary);
    await refused(call('file_read', id, { path: 'latin1.txt' }), 'bad_arguments', binary);
  });

  it('file_write is capped by the workspace maxFileBytes, checked before writing (also when appending)', async () => {
    const small = new Workspace(root, { maxFileBytes: 100 });
    const t = Object.fromEntries(fileTools(small).map((x) => [x.name, x]));
    const { id, dir } = await session();
    await refused(t.file_write.run({ path: 'big.txt', content: 'x'.repeat(101) }, ctx(id)), 'bad_arguments', TOO_LARGE_MESSAGE);
    expect(existsSync(join(dir, 'big.txt'))).toBe(false);
    await t.file_write.run({ path: 'f.txt', content: 'x'.repeat(100) }, ctx(id));
    expect((await readFile(join(dir, 'f.txt'))).length).toBe(100);
    await t.file_write.run({ path: 'g.txt', content: 'y'.repeat(60) }, ctx(id));
    await refused(t.file_write.run({ path: 'g.txt', content: 'z'.repeat(41), append: true }, ctx(id)), 'bad_arguments', TOO_LARGE_MESSAGE);
    expect(await readFile(join(dir, 'g.txt'), 'utf8')).toBe('y'.repeat(60));
    // The cap counts bytes, not characters.
    await refused(t.file_write.run({ path: 'h.txt', content: 'é'.repeat(51) }, ctx(id)), 'bad_arguments', TOO_LARGE_MESSAGE);
    // Reading a file over the cap returns a part of it (the download refuses it whole).
    await writeFile(join(dir, 'huge.txt'), 'h'.repeat(500));
    const r = await t.file_read.run({ path: 'huge.txt', max_bytes: 50 }, ctx(id));
    expect(r.output).toMatchObject({ content: 'h'.repeat(50), size: 500, truncated: true });
    await expect(small.openFile(id, ['huge.txt'])).rejects.toThrow(TOO_LARGE_MESSAGE);
  });

  it('Workspace.writeFile accepts bytes and returns the client path and size', async () => {
    const { id, dir } = await session();
    const w = await ws.writeFile(id, ['bin', 'b.dat'], new Uint8Array([1, 2, 3]));
    expect(w).toEqual({ path: '/bin/b.dat', size: 3 });
    expect([...(await readFile(join(dir, 'bin/b.dat')))]).toEqual([1, 2, 3]);
    expect(await realpath(join(dir, 'bin/b.dat'))).toBe(join(await realpath(dir), 'bin/b.dat'));
  });
});
