/**
 * The python_executor tool: Pyodide in a worker thread, no network, no host files or processes,
 * time and memory limits that end the call (and the next call still works).
 *
 * One executor serves the whole file (Pyodide loads in a few seconds; it is loaded again after
 * each limit test, which replaces the worker).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pythonExecutorTool } from '../src/tools/python.js';
import { ToolError } from '../src/tools/tool.js';

const TIME_LIMIT_MS = 5_000;
const MEMORY_MB = 128;
const SLOW = 60_000; // a cold start is a few seconds, more on a busy machine

// Set before the worker starts: it must not inherit the service's environment.
process.env.PY_SANDBOX_TEST_SECRET = 'do-not-leak';
const tool = pythonExecutorTool({ timeoutMs: TIME_LIMIT_MS, memoryMb: MEMORY_MB, outputCapBytes: 4096 });
const ctx = () => ({ signal: new AbortController().signal });

interface PyOutput {
  stdout: string;
  stderr: string;
  result: string | null;
  error: string | null;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
}

async function py(code: string, stdin?: string): Promise<PyOutput & { text: string }> {
  const r = await tool.run({ code, stdin }, ctx());
  return { ...(r.output as unknown as PyOutput), text: r.text };
}

/** The ToolError a call throws (the test fails if it resolves). */
async function pyFailure(code: string, signal?: AbortSignal): Promise<ToolError> {
  try {
    await tool.run({ code }, signal ? { signal } : ctx());
  } catch (e) {
    expect(e).toBeInstanceOf(ToolError);
    return e as ToolError;
  }
  throw new Error('expected the call to fail');
}

// Host side: a local HTTP server that counts every TCP connection (nothing may reach it), and
// files the sandbox must not see: one in the OS temp dir, one in the repository (the cwd).
let server: Server;
let port: number;
let connections = 0;
let hostTmp: string;
let repoTmp: string;
let marker: string;

beforeAll(async () => {
  // One connection per request (no keep-alive), so that every request from the host is a new connection.
  server = createServer((_req, res) => res.setHeader('connection', 'close').end('reached the host'));
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  hostTmp = await mkdtemp(join(tmpdir(), 'py-sandbox-'));
  repoTmp = await mkdtemp(join(process.cwd(), 'zz-py-sandbox-')); // zz-* is git-ignored
  await writeFile(join(hostTmp, 'secret.txt'), 'host secret');
  await writeFile(join(repoTmp, 'secret.txt'), 'repo secret');
  marker = join(hostTmp, 'escaped');
  // Warm up once, with a generous timeout, so that the tests below time only themselves.
  await py('1');
}, SLOW);

afterAll(async () => {
  delete process.env.PY_SANDBOX_TEST_SECRET;
  await tool.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(hostTmp, { recursive: true, force: true });
  await rm(repoTmp, { recursive: true, force: true });
});

describe('python_executor: running code', () => {
  it('describes itself', () => {
    expect(tool).toMatchObject({ name: 'python_executor', category: 'code', retryable: false, rateLimitSetting: 'PYTHON_EXECUTOR_RATE_LIMIT' });
    expect(tool.parameters.required).toEqual(['code']);
    expect(tool.parameters.properties.code).toMatchObject({ type: 'string', maxLength: 100_000 });
  });

  it('returns stdout, stderr and the repr of the last expression', async () => {
    const r = await py('import sys\nprint("hello", 6 * 7)\nprint("careful", file=sys.stderr)\n{"a": [1, 2.0, None]}');
    expect(r).toMatchObject({ stdout: 'hello 42\n', stderr: 'careful\n', result: "{'a': [1, 2.0, None]}", error: null });
    expect(r.text).toContain('stdout:\nhello 42');
    expect(r.text).toContain("result: {'a': [1, 2.0, None]}");
    expect((await py('x = 5')).result).toBeNull(); // an assignment has no value
    expect((await py('"text"')).result).toBe("'text'"); // repr, not str
    expect((await py('None')).result).toBeNull();
  });

  it('supports top-level await and the standard library', async () => {
    const r = await py('import asyncio, json, fractions\nawait asyncio.sleep(0.01)\njson.dumps({"f": str(fractions.Fraction(1, 3) * 3)})');
    expect(r.result).toBe('\'{"f": "1"}\'');
  });

  it('feeds stdin', async () => {
    const r = await py('name = input()\nrest = __import__("sys").stdin.read()\nprint(f"hi {name}")\nrest', 'Ada\nline 2\nline 3');
    expect(r.stdout).toBe('hi Ada\n');
    expect(r.result).toBe("'line 2\\nline 3'");
    expect((await py('input()')).error).toMatch(/EOFError/);
  });

  it('returns an exception as a traceback, not as a thrown error', async () => {
    const r = await py('def f(x):\n    return 1 / x\nprint("before")\nf(0)');
    expect(r.stdout).toBe('before\n');
    expect(r.result).toBeNull();
    expect(r.error).toMatch(/^Traceback \(most recent call last\):/);
    expect(r.error).toContain('File "<exec>", line 4, in <module>');
    expect(r.error).toContain('File "<exec>", line 2, in f');
    expect(r.error).toMatch(/ZeroDivisionError: division by zero\n$/);
    expect(r.error).not.toMatch(/_pyodide|_base\.py|sandbox-setup/); // only the user's frames
    expect(r.text).toMatch(/^Python raised an exception \(ZeroDivisionError: division by zero\)/);
    expect((await py('def broken(:\n  pass')).error).toMatch(/SyntaxError/);
    expect((await py('import sys\nsys.exit(3)')).error).toMatch(/SystemExit: 3/);
    expect((await py('import sys\nprint("done")\nsys.exit(0)')).error).toBeNull();
  });

  it('runs concurrent calls one at a time, each with its own output', async () => {
    const calls = [1, 2, 3].map((i) => py(`import asyncio\nprint("call ${i}")\nawait asyncio.sleep(0.05)\n${i} * 10`));
    const results = await Promise.all(calls);
    expect(results.map((r) => [r.stdout, r.result])).toEqual([
      ['call 1\n', '10'],
      ['call 2\n', '20'],
      ['call 3\n', '30'],
    ]);
  });

  it('caps output and says so', async () => {
    const r = await py('print("x" * 10000)\nimport sys\nsys.stderr.write("y" * 5000)\n"z" * 100000');
    expect(r.stdoutTruncated).toBe(true);
    expect(r.stderrTruncated).toBe(true);
    expect(r.stdout).toMatch(/^x{4096}\n\[output truncated: 5905 more bytes not shown\]$/);
    expect(r.stderr).toMatch(/\[output truncated: 904 more bytes not shown\]$/);
    expect(r.result).toMatch(/\.\.\. \[repr truncated: \d+ more characters\]$/);
    expect(r.result!.length).toBeLessThan(20_000);
  });

  it('starts every call from a clean namespace, files and modules', async () => {
    await py(
      [
        'secret = 42',
        'import json',
        'json.dumps = lambda *a, **k: "patched"',
        'open("/tmp/left.txt", "w").write("x")',
        'open("mymod.py", "w").write("VALUE = 1")',
        'import sys; sys.path.insert(0, "."); import mymod',
      ].join('\n'),
    );
    const r = await py('import os, json\n("secret" in globals(), os.listdir("/tmp"), os.listdir("."), json.dumps(1))');
    expect(r.result).toBe("(False, [], [], '1')");
    expect((await py('import mymod')).error).toMatch(/ModuleNotFoundError/);
    // files work inside one call
    expect((await py('open("/tmp/a.txt", "w").write("abc")\nopen("/tmp/a.txt").read()')).result).toBe("'abc'");
  });
});

describe('python_executor: sandbox', () => {
  // Each attempt must fail in Python; `connections` shows that nothing reached the host either.
  const networkAttempts: Record<string, string> = {
    'js.fetch': `import js\nawait js.fetch("http://127.0.0.1:{port}/")`,
    'pyodide.http.pyfetch': `from pyodide.http import pyfetch\nawait pyfetch("http://127.0.0.1:{port}/")`,
    'urllib.request': `import urllib.request\nurllib.request.urlopen("http://127.0.0.1:{port}/", timeout=2).read()`,
    socket: `import socket\ns = socket.create_connection(("127.0.0.1", {port}), timeout=2)\ns.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")\ns.recv(100)`,
    'http.client': `import http.client\nc = http.client.HTTPConnection("127.0.0.1", {port}, timeout=2)\nc.request("GET", "/")\nc.getresponse().read()`,
  };
  for (const [name, template] of Object.entries(networkAttempts)) {
    it(`has no network: ${name}`, async () => {
      const before = connections;
      const r = await py(template.replaceAll('{port}', String(port)));
      expect(r.error).toMatch(/Error/);
      expect(r.result).toBeNull();
      // A sentinel from the host, behind anything the sandbox may have sent: only it is counted.
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('reached the host');
      expect(connections).toBe(before + 1);
    });
  }

  it('the test server is reachable from the host (so the checks above mean something)', async () => {
    const before = connections;
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('reached the host');
    expect(connections).toBe(before + 1);
  });

  it('sees none of the host file system', async () => {
    expect(existsSync('/etc/hostname')).toBe(true);
    const files = ['/etc/hostname', '/etc/passwd', join(hostTmp, 'secret.txt'), join(repoTmp, 'secret.txt'), join(process.cwd(), 'package.json')];
    for (const f of files) {
      const r = await py(`open(${JSON.stringify(f)}).read()`);
      expect(r.error, f).toMatch(/FileNotFoundError/);
    }
    const r = await py(
      'import os, json\nprint(json.dumps({"root": sorted(os.listdir("/")), "cwd": os.getcwd(), "here": os.listdir("."), "work": os.path.exists("/work")}))',
    );
    const view = JSON.parse(r.stdout) as { root: string[]; cwd: string; here: string[]; work: boolean };
    expect(view.root).not.toContain('work');
    expect(view.root).not.toContain('etc');
    expect(view.root).not.toContain('usr');
    expect(view.cwd).toBe('/home/pyodide');
    expect(view.here).toEqual([]);
    expect(view.work).toBe(false);
  });

  it('cannot mount the host file system', async () => {
    const attempts = [
      'import pyodide_js\npyodide_js.mountNodeFS("/mnt", "/")',
      'import pyodide_js\nfs = pyodide_js.FS\nfs.mkdirTree("/mnt")\nfs.mount(pyodide_js._module.NODEFS, {"root": "/"}, "/mnt")',
      'import pyodide_js\nfs = pyodide_js.FS\nfs.mkdirTree("/mnt")\nfs.mount(fs.filesystems.NODEFS, {"root": "/"}, "/mnt")',
    ];
    for (const code of attempts) {
      const r = await py(`${code}\nimport os\nos.listdir("/mnt")`);
      expect(r.error, code).toMatch(/Error/);
    }
    expect((await py('import pyodide_js\nlist(pyodide_js.FS.filesystems.object_keys())')).result).toBe("['MEMFS']");
  });

  it('sees no host environment variables', async () => {
    const r = await py('import os\nsorted(os.environ)');
    expect(r.result).not.toContain('PY_SANDBOX_TEST_SECRET');
    expect(r.result).not.toMatch(/NATS|DATABASE|JWT|NODE_/);
  });

  it(
    'reaches neither host processes nor Node through JavaScript',
    async () => {
      const m = JSON.stringify(marker);
      const writeMarker = `process.getBuiltinModule("fs").writeFileSync(${m}, "x")`;
      const attempts = [
        `import os\nos.system("touch " + ${m})`,
        `import subprocess\nsubprocess.run(["touch", ${m}])`,
        // Emscripten's system() goes through Node's child_process
        `import pyodide_js\nm = pyodide_js._module\nm.__emscripten_system(m.stringToNewUTF8("touch " + ${m}))`,
        // new JavaScript from any function's constructor, eval, or run_js
        `from pyodide.ffi import to_js\nf = to_js({}).constructor.constructor(${JSON.stringify(writeMarker)})\nf()`,
        `from pyodide.ffi import to_js\nto_js([]).map.constructor(${JSON.stringify(writeMarker)})()`,
        `from pyodide.code import run_js\nrun_js(${JSON.stringify(writeMarker)})`,
        `import pyodide_js\nm = pyodide_js._module\nm._emscripten_run_script(m.stringToNewUTF8(${JSON.stringify(writeMarker)}))`,
        `import pyodide_js\npyodide_js._api.tests.Function(${JSON.stringify(writeMarker)})()`,
        // Node's globals
        'import js\njs.process.getBuiltinModule("fs")',
        'import js\njs.require("child_process")',
        'import pyodide_js\npyodide_js._api.loadBinaryFile("/etc/hostname")',
      ];
      for (const code of attempts) {
        // A Python exception, or a runtime that fails hard (it is replaced): either way, no escape.
        const failed = await py(code).then(
          (r) => r.error !== null,
          (e: unknown) => e instanceof ToolError,
        );
        expect(failed, code).toBe(true);
        expect(existsSync(marker), code).toBe(false);
      }
      expect((await py('1 + 1')).result).toBe('2');
    },
    SLOW,
  );
});

describe('python_executor: limits', () => {
  it(
    'ends an infinite loop at the time limit; the next call still works',
    async () => {
      const e = await pyFailure('while True:\n    pass');
      expect(e.kind).toBe('limit');
      expect(e.message).toMatch(/time limit exceeded/);
      expect((await py('print("back")\n1 + 1')).result).toBe('2');
    },
    SLOW,
  );

  it(
    'ends a memory bomb at the memory limit; the next call still works',
    async () => {
      const e = await pyFailure('chunks = []\nwhile True:\n    chunks.append(bytearray(10 ** 7))');
      expect(e.kind).toBe('limit');
      expect(e.message).toMatch(/memory limit exceeded/); // the limit, not the clock, ended it
      expect((await py('len(bytearray(10 ** 7))')).result).toBe('10000000');
    },
    SLOW,
  );

  it(
    'ends a JavaScript heap bomb (through the js module) at the memory limit',
    async () => {
      const e = await pyFailure('import js\nkeep = js.Array.new()\nwhile True:\n    keep.push(js.Array.new(1000000).fill(1.5))');
      expect(e.kind).toBe('limit');
      expect(e.message).toMatch(/memory limit exceeded.*JavaScript heap/);
      expect((await py('"still here"')).result).toBe("'still here'");
    },
    SLOW,
  );

  it(
    'lets code that catches MemoryError carry on',
    async () => {
      const r = await py('try:\n    x = bytearray(10 ** 9)\nexcept MemoryError:\n    print("too big")\n"handled"');
      expect(r).toMatchObject({ stdout: 'too big\n', result: "'handled'", error: null });
    },
    SLOW,
  );

  it(
    'stops when the call is cancelled',
    async () => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(new Error('task cancelled')), 300);
      const e = await pyFailure('while True:\n    pass', ac.signal);
      // The cancellation, not the time limit, ended it.
      expect(e.message).toMatch(/cancelled: task cancelled/);
      expect(e.message).not.toMatch(/time limit/);
      expect((await py('"again"')).result).toBe("'again'");
    },
    SLOW,
  );
});
