/**
 * The worker thread behind the `python_executor` tool (./python.ts): loads Pyodide (CPython on
 * WebAssembly) once, closes every way out of the sandbox, then runs one snippet per `run`
 * message, each in a fresh `__main__` namespace.
 *
 * Plain JavaScript on purpose: it runs unchanged under the tsx loader (development, tests) and
 * from dist/ after `npm run build` (scripts/build.mjs copies it beside python.js).
 *
 * Protocol (parent -> worker): `{ type: 'run', id, code, stdin }`.
 * Worker -> parent: `{ type: 'ready', loadMs, wasmHeapBytes }` once, then per run
 * `{ type: 'result', id, stdout, stderr, stdoutTruncated, stderrTruncated, result, error,
 * memoryLimitHit, fatal }`, or `{ type: 'failed', message }` when Pyodide cannot start.
 *
 * The sandbox, in layers (each would be enough for the common routes; together they close the
 * ones that bypass the others):
 * - Python's `js` module is a small object of harmless builtins, not `globalThis`;
 * - Pyodide's ways to reach the host are removed (NODEFS and the other host-backed file systems,
 *   mountNodeFS, package loading, node sockets, snapshot and script loading);
 * - the Node built-ins a Pyodide closure may still hold (fs, child_process, net, vm, ...) have
 *   every exported function replaced by one that throws, `require` of anything new throws, and
 *   `process` loses binding/dlopen/getBuiltinModule/kill/env and the like;
 * - globalThis loses fetch, XMLHttpRequest, WebSocket, require; `eval` and the Function
 *   constructors (also reachable as `anyFunction.constructor`) throw, so code reaching a JS
 *   object cannot compile new JavaScript (and so cannot `import()` anything);
 * - `os.system` & co. raise in Python (Emscripten would run them through the host shell);
 * - the WebAssembly heap cannot grow past `memoryMb` (Memory.prototype.grow refuses), which
 *   Python sees as MemoryError.
 * The parent adds the time limit (it terminates this thread) and the JS heap limit
 * (`resourceLimits`).
 */
/* global WebAssembly */
import { parentPort, workerData } from 'node:worker_threads';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const port = parentPort;
const { memoryMb, outputCapBytes, reprCapChars } = workerData;
const WASM_PAGE = 65536;
const memoryLimitBytes = memoryMb * 1024 * 1024;

// ---- WebAssembly heap limit: installed before Pyodide creates its memory. --------------------
let memoryLimitHit = false;
{
  const realGrow = WebAssembly.Memory.prototype.grow;
  Object.defineProperty(WebAssembly.Memory.prototype, 'grow', {
    value: function grow(deltaPages) {
      if (this.buffer.byteLength + Number(deltaPages) * WASM_PAGE > memoryLimitBytes) {
        memoryLimitHit = true;
        throw new RangeError(`WebAssembly memory limit of ${memoryMb} MB reached`);
      }
      return Reflect.apply(realGrow, this, [deltaPages]);
    },
    writable: false,
    configurable: false,
  });
}

// ---- Per-run output capture. ------------------------------------------------------------------
function sink() {
  return { chunks: [], bytes: 0, dropped: 0 };
}
let out = sink();
let err = sink();
let active = false;
function capture(s, buf) {
  if (!active) return buf.length; // output of leftover callbacks between runs goes nowhere
  const room = outputCapBytes - s.bytes;
  if (room > 0) {
    const part = buf.length <= room ? buf : buf.subarray(0, room);
    s.chunks.push(Uint8Array.from(part));
    s.bytes += part.length;
  }
  s.dropped += Math.max(0, buf.length - Math.max(0, room));
  return buf.length;
}
function text(s) {
  const all = new Uint8Array(s.bytes);
  let at = 0;
  for (const c of s.chunks) {
    all.set(c, at);
    at += c.length;
  }
  let t = new TextDecoder('utf-8', { fatal: false }).decode(all);
  if (s.dropped > 0) t += `\n[output truncated: ${s.dropped} more bytes not shown]`;
  return t;
}
let stdinBytes = new Uint8Array(0);
let stdinAt = 0;

// ---- Timers created during a run are cleared when it ends (no work leaks into the next run). --
const runTimers = { timeouts: new Set(), intervals: new Set(), immediates: new Set() };
function trackTimers() {
  const wrap = (name, set, clearName) => {
    const real = globalThis[name];
    const realClear = globalThis[clearName];
    globalThis[name] = function (...args) {
      const h = Reflect.apply(real, globalThis, args);
      if (active) set.add(h);
      return h;
    };
    globalThis[clearName] = function (h) {
      set.delete(h);
      return Reflect.apply(realClear, globalThis, [h]);
    };
    return () => {
      for (const h of set) Reflect.apply(realClear, globalThis, [h]);
      set.clear();
    };
  };
  const clears = [
    wrap('setTimeout', runTimers.timeouts, 'clearTimeout'),
    wrap('setInterval', runTimers.intervals, 'clearInterval'),
    wrap('setImmediate', runTimers.immediates, 'clearImmediate'),
  ];
  return () => clears.forEach((c) => c());
}

// ---- Sandbox. ---------------------------------------------------------------------------------
const blocked = (what) =>
  function blocked() {
    throw new Error(`${what} is not available in the Python sandbox`);
  };

/** Harmless globals Python may use through `import js` (and pyodide.ffi.wrappers' timers). */
function jsGlobals() {
  const g = Object.create(null);
  for (const k of ['Object', 'Array', 'Promise', 'JSON', 'Math', 'Date', 'Error', 'Map', 'Set', 'WeakRef', 'ArrayBuffer', 'Uint8Array']) g[k] = globalThis[k];
  for (const k of ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval']) {
    g[k] = (...args) => Reflect.apply(globalThis[k], globalThis, args);
  }
  return g;
}

/** The Python-side part: clear errors instead of host escapes, and the per-run runner. */
const PYTHON_SETUP = String.raw`
import os, posix, sys, asyncio, traceback, shutil, builtins
from pyodide.code import eval_code_async

def _taskorch_blocked(name):
    def blocked(*args, **kwargs):
        raise PermissionError(f"{name} is not available in the Python sandbox")
    blocked.__name__ = name.rpartition(".")[2]
    return blocked

# Emscripten would run these through the host's shell (os.system) or fail obscurely.
for _mod in (os, posix):
    for _name in ("system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execle",
                  "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "posix_spawn",
                  "posix_spawnp", "fork", "forkpty", "kill", "killpg"):
        if hasattr(_mod, _name):
            setattr(_mod, _name, _taskorch_blocked("os." + _name))
os.environ.pop("_", None)  # the worker's host path

def _taskorch_make_runner(repr_cap):
    # Everything the runner and the reset use is bound here, so a snippet that patches a module
    # cannot break them (and the reset puts the module back for the next snippet anyway).
    home = os.environ.get("HOME", "/home/pyodide")
    writable = ("/tmp", home)
    base_modules = dict(sys.modules)
    base_dicts = {name: dict(vars(mod)) for name, mod in base_modules.items() if hasattr(mod, "__dict__")}
    base_path = list(sys.path)
    base_env = dict(os.environ)
    base_recursion = sys.getrecursionlimit()
    std = (sys.stdin, sys.stdout, sys.stderr)
    all_tasks, get_event_loop = asyncio.all_tasks, asyncio.get_event_loop
    format_exception = traceback.format_exception
    listdir, join, isdir, islink, unlink, makedirs, chdir = os.listdir, os.path.join, os.path.isdir, os.path.islink, os.unlink, os.makedirs, os.chdir
    rmtree = shutil.rmtree
    environ = os.environ
    _repr, _len, _isinstance, _type, _list, _vars, _getattr = repr, len, isinstance, type, list, vars, getattr
    sys_modules = sys.modules
    settrace, setprofile, setrecursionlimit = sys.settrace, sys.setprofile, sys.setrecursionlimit

    def user_traceback(e):
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "<exec>":
            tb = tb.tb_next
        return "".join(format_exception(_type(e), e, tb))

    def restore_modules():
        for name in _list(sys_modules):
            if name in base_modules:
                continue
            mod = sys_modules.get(name)
            origin = _getattr(_getattr(mod, "__spec__", None), "origin", None) or ""
            if name.startswith("encodings") or origin in ("built-in", "frozen") or origin.endswith(".so"):
                continue  # C modules cannot be imported twice; codecs stay registered
            del sys_modules[name]
        for name, mod in base_modules.items():
            sys_modules[name] = mod
            saved = base_dicts.get(name)
            if saved is None:
                continue
            d = _vars(mod)
            for k in [k for k in d if k not in saved]:
                del d[k]
            for k, v in saved.items():
                if d.get(k, saved) is not v:
                    d[k] = v

    def reset():
        for task in all_tasks(get_event_loop()):
            task.cancel()
        restore_modules()
        sys.stdin, sys.stdout, sys.stderr = std
        settrace(None)
        setprofile(None)
        setrecursionlimit(base_recursion)
        sys.path[:] = base_path
        environ.clear()
        environ.update(base_env)
        for d in writable:
            makedirs(d, exist_ok=True)
            for entry in listdir(d):
                p = join(d, entry)
                try:
                    if isdir(p) and not islink(p):
                        rmtree(p)
                    else:
                        unlink(p)
                except OSError:
                    pass
        chdir(home)

    async def run(code):
        ns = {"__name__": "__main__", "__builtins__": builtins}
        result = error = None
        memory_error = False
        try:
            value = await eval_code_async(code, ns, filename="<exec>")
            if value is not None:
                try:
                    result = _repr(value)
                except BaseException as e:
                    result = f"<repr() failed: {_type(e).__name__}: {e}>"
                if _len(result) > repr_cap:
                    result = result[:repr_cap] + f"... [repr truncated: {_len(result) - repr_cap} more characters]"
        except SystemExit as e:
            if e.code not in (None, 0):
                error = user_traceback(e)
        except BaseException as e:
            memory_error = _isinstance(e, MemoryError)
            error = user_traceback(e)
        finally:
            for stream in std[1:]:
                try:
                    stream.flush()
                except BaseException:
                    pass
        return (result, error, memory_error)

    return run, reset
`;

function harden(py) {
  const req = createRequire(import.meta.url);
  const dangerous = dangerousValues(req);

  // Host-backed file systems: only MEMFS stays mountable.
  const FS = py.FS;
  for (const k of Object.keys(FS.filesystems)) if (k !== 'MEMFS') delete FS.filesystems[k];
  for (const k of ['NODEFS', 'NODERAWFS', 'IDBFS', 'WORKERFS', 'PROXYFS']) {
    try {
      if (k in py._module) py._module[k] = undefined;
    } catch {
      /* not there */
    }
  }

  // Pyodide API members that load from or reach the host.
  const apiBlock = [
    'mountNodeFS',
    'mountNativeFS',
    'loadPackage',
    'loadPackagesFromImports',
    'useNodeSockFS',
    'unpackArchive',
    'registerComlink',
    'makeMemorySnapshot',
  ];
  // Plain assignments: Pyodide's fatal-error handler replaces API members and must be able to.
  for (const k of apiBlock) py[k] = blocked(`pyodide.${k}`);
  const internal = py._api;
  for (const k of ['loadBinaryFile', 'loadDynlib', 'install', 'initializeNodeSockFS', 'makeSnapshot', 'saveSnapshot', 'restoreSnapshot', 'loadScript']) {
    if (k in internal) internal[k] = blocked(`pyodide internal ${k}`);
  }
  if ('_nodeSock' in internal) internal._nodeSock = undefined;
  internal.tests = {}; // held the real Function constructor
  if (internal.packageManager) {
    for (const k of Object.getOwnPropertyNames(Object.getPrototypeOf(internal.packageManager))) {
      if (k !== 'constructor' && typeof internal.packageManager[k] === 'function') internal.packageManager[k] = blocked(`package manager ${k}`);
    }
  }

  // Node built-ins: every exported function of the ones that touch the host throws. Closures in
  // Pyodide hold some of these module objects (fs, child_process, vm, net); ESM namespaces are
  // re-synced below so `import('node:x')` bindings see the same stubs.
  const hostModules = 'fs fs/promises child_process net tls dgram dns dns/promises http https http2 vm worker_threads inspector v8 os'.split(' ');
  for (const name of hostModules) {
    let m;
    try {
      m = req(name);
    } catch {
      continue;
    }
    const targets = name === 'fs' ? [m, m.promises] : [m];
    for (const t of targets) {
      for (const key of Reflect.ownKeys(t)) {
        const d = Object.getOwnPropertyDescriptor(t, key);
        if (!d || !('value' in d) || typeof d.value !== 'function' || !d.writable) continue;
        // fsync of the standard streams is the one host call Pyodide makes on its own.
        t[key] = name === 'fs' && (key === 'fsyncSync' || key === 'fsync') ? () => {} : blocked(`${name}.${String(key)}`);
      }
    }
  }
  const ws = (() => {
    try {
      return req('ws');
    } catch {
      return undefined;
    }
  })();
  if (ws) for (const k of Object.keys(ws)) if (typeof ws[k] === 'function') ws[k] = blocked(`ws.${k}`);

  // Nothing new can be required (createRequire-made functions go through Module._load).
  const Module = req('module');
  const syncESM = syncBuiltinESMExports;
  for (const k of ['_load', 'createRequire', 'register', '_resolveFilename', 'runMain', 'enableCompileCache', 'findPackageJSON']) {
    if (typeof Module[k] === 'function') Module[k] = blocked(`module.${k}`);
  }
  syncESM();

  // process: the members that reach the host or other processes, and the environment.
  const proc = globalThis.process;
  for (const k of [
    'binding',
    '_linkedBinding',
    'dlopen',
    'getBuiltinModule',
    'kill',
    '_kill',
    'chdir',
    'umask',
    'setuid',
    'setgid',
    'seteuid',
    'setegid',
    'setgroups',
    'initgroups',
    'abort',
    '_debugProcess',
    '_debugEnd',
    '_startProfilerIdleNotifier',
    '_stopProfilerIdleNotifier',
    'openStdin',
    'send',
    'disconnect',
    'loadEnvFile',
    'setSourceMapsEnabled',
    'execve',
    '_rawDebug',
  ]) {
    try {
      Object.defineProperty(proc, k, { value: blocked(`process.${k}`), writable: false, configurable: false });
    } catch {
      /* not configurable */
    }
  }
  for (const k of ['report', 'mainModule', 'permission', 'channel']) {
    try {
      Object.defineProperty(proc, k, { value: undefined, writable: false, configurable: false });
    } catch {
      /* not configurable */
    }
  }
  try {
    Object.defineProperty(proc, 'env', { value: Object.freeze({}), writable: false, configurable: false });
  } catch {
    /* not configurable */
  }

  // Network and module globals.
  for (const k of ['fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'require', 'module', 'BroadcastChannel', 'navigator']) {
    try {
      delete globalThis[k];
    } catch {
      /* not configurable */
    }
    if (k in globalThis) {
      try {
        Object.defineProperty(globalThis, k, { value: undefined, writable: false, configurable: false });
      } catch {
        /* leave */
      }
    }
  }

  // No new JavaScript: eval and every Function constructor throw.
  const ctors = [
    Function,
    Object.getPrototypeOf(async function () {}).constructor,
    Object.getPrototypeOf(function* () {}).constructor,
    Object.getPrototypeOf(async function* () {}).constructor,
  ];
  for (const C of ctors) {
    const stub = blocked(`${C.name} (JavaScript code generation)`);
    Object.defineProperty(stub, 'name', { value: C.name });
    Object.defineProperty(C.prototype, 'constructor', { value: stub, writable: false, configurable: false });
  }
  const noCodegen = {
    apply() {
      throw new Error('JavaScript code generation is not available in the Python sandbox');
    },
    construct() {
      throw new Error('JavaScript code generation is not available in the Python sandbox');
    },
  };
  globalThis.Function = new Proxy(Function, noCodegen);
  globalThis.eval = blocked('eval');

  // Any other reference to one of those values that Python could reach through the Pyodide API
  // (e.g. `pyodide._api.tests.Function`, the real Function constructor) is replaced too.
  sweep([py, py._api, py._module], dangerous, (v) => v instanceof py.ffi.PyProxy);
}

/** The originals the sandbox takes away, captured before they are replaced. */
function dangerousValues(req) {
  const found = new Map();
  const add = (v, name) => {
    if (typeof v === 'function' && !found.has(v)) found.set(v, name);
  };
  add(Function, 'Function');
  add(Object.getPrototypeOf(async function () {}).constructor, 'AsyncFunction');
  add(Object.getPrototypeOf(function* () {}).constructor, 'GeneratorFunction');
  add(Object.getPrototypeOf(async function* () {}).constructor, 'AsyncGeneratorFunction');
  add(globalThis.eval, 'eval');
  for (const k of ['require', 'fetch', 'XMLHttpRequest', 'WebSocket']) add(globalThis[k], k);
  for (const k of ['binding', '_linkedBinding', 'dlopen', 'getBuiltinModule', 'kill', 'chdir', 'loadEnvFile']) add(process[k], `process.${k}`);
  for (const name of ['fs', 'child_process', 'net', 'tls', 'dgram', 'dns', 'http', 'https', 'http2', 'vm', 'worker_threads', 'inspector', 'v8', 'module']) {
    let m;
    try {
      m = req(name);
    } catch {
      continue;
    }
    for (const t of name === 'fs' ? [m, m.promises] : [m]) {
      for (const k of Reflect.ownKeys(t)) {
        const d = Object.getOwnPropertyDescriptor(t, k);
        if (d && 'value' in d && !(name === 'fs' && (k === 'fsyncSync' || k === 'fsync'))) add(d.value, `${name}.${String(k)}`);
      }
    }
  }
  return found;
}

/** Walks the data properties (and prototypes) reachable from `roots`, replacing dangerous values. */
function sweep(roots, dangerous, skip) {
  const seen = new Set();
  const stack = [...roots];
  while (stack.length > 0 && seen.size < 500_000) {
    const v = stack.pop();
    if (v === null || (typeof v !== 'object' && typeof v !== 'function') || seen.has(v)) continue;
    seen.add(v);
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || skip(v)) continue;
    let keys;
    try {
      keys = Reflect.ownKeys(v);
    } catch {
      continue;
    }
    for (const k of keys) {
      let d;
      try {
        d = Object.getOwnPropertyDescriptor(v, k);
      } catch {
        continue;
      }
      if (!d || !('value' in d)) continue;
      const name = dangerous.get(d.value);
      if (name !== undefined) {
        try {
          Object.defineProperty(v, k, { value: blocked(name), writable: false, configurable: false });
        } catch {
          try {
            v[k] = blocked(name);
          } catch {
            /* frozen: cannot be reached through here either way */
          }
        }
      } else {
        stack.push(d.value);
      }
    }
    try {
      stack.push(Object.getPrototypeOf(v));
    } catch {
      /* proxies may refuse */
    }
  }
}

// ---- Start. -----------------------------------------------------------------------------------
let py;
let runner;
let reset;
let clearRunTimers;
let fatal = false;

async function start() {
  const t0 = performance.now();
  const { loadPyodide } = await import('pyodide');
  py = await loadPyodide({
    jsglobals: jsGlobals(),
    env: { HOME: '/home/pyodide' },
    stdout: () => {},
    stderr: () => {},
    checkAPIVersion: true,
  });
  py.setStdout({ write: (buf) => capture(out, buf), isatty: false });
  py.setStderr({ write: (buf) => capture(err, buf), isatty: false });
  py.setStdin({ read: readStdin, isatty: false });
  // Warm the modules the runner uses before they become part of the baseline.
  // In a private namespace, not __main__ (which user code could import).
  const setupNs = py.globals.get('dict')();
  py.runPython(PYTHON_SETUP, { globals: setupNs, filename: '<sandbox-setup>' });
  const make = setupNs.get('_taskorch_make_runner');
  const pair = make(reprCapChars);
  runner = pair.get(0);
  reset = pair.get(1);
  for (const p of [pair, make, setupNs]) p.destroy();
  harden(py);
  clearRunTimers = trackTimers();
  port.postMessage({ type: 'ready', loadMs: Math.round(performance.now() - t0), wasmHeapBytes: py._module.HEAP8.length });
}

function readStdin(buffer) {
  const n = Math.min(buffer.length, stdinBytes.length - stdinAt);
  buffer.set(stdinBytes.subarray(stdinAt, stdinAt + n));
  stdinAt += n;
  return n;
}

async function run({ id, code, stdin }) {
  if (fatal) {
    port.postMessage({ type: 'result', id, fatal: true, error: 'the Python runtime is unusable after an earlier failure' });
    return;
  }
  out = sink();
  err = sink();
  stdinBytes = new TextEncoder().encode(stdin ?? '');
  stdinAt = 0;
  memoryLimitHit = false;
  // Output handlers are set again on each run: code may have replaced them.
  py.setStdout({ write: (buf) => capture(out, buf), isatty: false });
  py.setStderr({ write: (buf) => capture(err, buf), isatty: false });
  py.setStdin({ read: readStdin, isatty: false });
  active = true;
  let reply;
  try {
    const proxy = await runner(code);
    const [result, error, memoryError] = proxy.toJs();
    proxy.destroy();
    reply = { result: result ?? null, error: error ?? null, memoryError: memoryError === true };
  } catch (e) {
    // Not a Python exception (those come back in the tuple): Pyodide itself failed.
    fatal = true;
    reply = { fatal: true, error: String(e?.message ?? e) };
  }
  active = false;
  if (!fatal) {
    try {
      reset();
    } catch (e) {
      fatal = true;
      reply = { ...reply, fatal: true, error: reply.error ?? `reset failed: ${String(e?.message ?? e)}` };
    }
  }
  clearRunTimers();
  port.postMessage({
    type: 'result',
    id,
    ...reply,
    stdout: text(out),
    stderr: text(err),
    stdoutTruncated: out.dropped > 0,
    stderrTruncated: err.dropped > 0,
    memoryLimitHit,
  });
  out = sink();
  err = sink();
}

const started = start();
started.catch((e) => {
  port.postMessage({ type: 'failed', message: String(e?.stack ?? e) });
});
port.on('message', (m) => {
  if (m?.type === 'run') void started.then(() => run(m));
});
