/**
 * Benchmark: the embedded default's memory at rest (issue "Live at load" §4, a lean process).
 *
 * The whole service on its embedded defaults (ROLES=all, embedded nats-server and PGlite, the
 * offline model) is started as `npm start` runs it (its `node <flags> dist/main.js`, built first) and as a
 * developer may run the sources (`node --import tsx src/main.ts`), each twice on one data
 * folder: the first start creates the database, the second is every start after.
 * Once the service logs `ready`, it is left alone SETTLE_MS; then RSS is read from /proc (the
 * median of 5 samples) and split by component from the process's own figures
 * (process.memoryUsage through a preload: JS heap, external memory — PGlite's WASM heap is
 * there — and array buffers; the rest is code, the runtime and native allocations); threads
 * from /proc/<pid>/task. One more start with a model configured (LLM_BASE_URL; nothing is
 * called). The floor, measured in the same run: a bare Node process holding only PGlite on a
 * copy of the same database, with the service's shared buffers and with PGlite's defaults.
 * Time to ready is from spawn to the `ready` log line. Target: ≤ 250 MB, ready < 3 s on a
 * second start.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, npmStartArgv, rssKb, sleep } from './lib/proc.js';
import { fmtInt, table, verdict } from './lib/report.js';

const TARGET_MB = 250;
const TARGET_READY_S = 3;

export interface RssResult {
  run: string;
  rssMb: number;
  heapMb?: number;
  externalMb?: number;
  arrayBuffersMb?: number;
  otherMb?: number;
  threads: number;
  readySeconds?: number;
}

const mb = (bytes: number) => +(bytes / 1048576).toFixed(1);

async function medianRssMb(pid: number): Promise<number> {
  const v: number[] = [];
  for (let i = 0; i < 5; i++) {
    v.push(rssKb(pid));
    await sleep(200);
  }
  v.sort((a, b) => a - b);
  return +(v[2] / 1024).toFixed(1);
}

const threadsOf = (pid: number) => readdirSync(`/proc/${pid}/task`).length;

/** Spawns `argv`, resolves when a line of its output matches `ready`; the time it took. */
function startUntil(argv: string[], env: Record<string, string>, ready: RegExp, timeoutMs: number): Promise<{ proc: ChildProcess; seconds: number }> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, argv, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`not ready within ${timeoutMs} ms:\n${out.slice(-2000)}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out = (out + d.toString()).slice(-16_384);
      if (ready.test(out)) {
        clearTimeout(timer);
        proc.stdout!.off('data', onData);
        proc.stderr!.off('data', onData);
        resolve({ proc, seconds: +((performance.now() - t0) / 1000).toFixed(2) });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before ready:\n${out.slice(-2000)}`));
    });
  });
}

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await Promise.race([exited, sleep(20_000).then(() => proc.kill('SIGKILL'))]);
}

async function measureService(run: string, argv: string[], dataDir: string, settleMs: number, env: Record<string, string> = {}): Promise<RssResult> {
  const report = join(dataDir, '..', `${run.replace(/\W+/g, '-')}.mem.json`);
  const { proc, seconds } = await startUntil(
    ['--import', join(ROOT, 'bench/procs/mem-report.mjs'), ...argv],
    {
      DATA_DIR: dataDir,
      GATEWAY_PORT: '0',
      ORCHESTRATOR_GRPC_PORT: '0',
      LLM_SERVICE_PORT: '0',
      AGENT_GRPC_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      GRPC_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      MEM_REPORT_FILE: report,
      ...env,
    },
    /"msg":"ready/,
    120_000,
  );
  try {
    await sleep(settleMs);
    const rssMb = await medianRssMb(proc.pid!);
    const m = JSON.parse(readFileSync(report, 'utf8')) as NodeJS.MemoryUsage;
    const heapMb = mb(m.heapTotal);
    const externalMb = mb(m.external);
    return {
      run,
      rssMb,
      heapMb,
      externalMb,
      arrayBuffersMb: mb(m.arrayBuffers),
      otherMb: +(rssMb - heapMb - externalMb).toFixed(1),
      threads: threadsOf(proc.pid!),
      readySeconds: seconds,
    };
  } finally {
    await stop(proc);
  }
}

async function measureFloor(run: string, dataDir: string, settleMs: number, sharedBuffers?: string): Promise<RssResult> {
  const { proc, seconds } = await startUntil(
    [join(ROOT, 'bench/procs/pglite-floor.mjs'), dataDir, ...(sharedBuffers ? [sharedBuffers] : [])],
    {},
    /ready/,
    60_000,
  );
  try {
    await sleep(Math.min(settleMs, 5_000));
    return { run, rssMb: await medianRssMb(proc.pid!), threads: threadsOf(proc.pid!), readySeconds: seconds };
  } finally {
    await stop(proc);
  }
}

export async function runRss(o: { quick: boolean; log: (s: string) => void }): Promise<{ results: RssResult[]; report: string }> {
  const settleMs = o.quick ? 5_000 : 15_000;
  const root = mkdtempSync(join(tmpdir(), 'bench-rss-'));
  const results: RssResult[] = [];
  try {
    o.log('rss: building dist/ (npm run build)');
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
    const tsx = ['--import', 'tsx', 'src/main.ts'];
    const dist = npmStartArgv();
    for (const [name, argv] of [
      ['npm start (dist)', dist],
      ['sources (tsx)', tsx],
    ] as const) {
      const dataDir = join(root, name.replace(/\W+/g, '-'));
      o.log(`rss: ${name}, first start`);
      results.push(await measureService(`${name}, first start`, [...argv], dataDir, settleMs));
      o.log(`rss: ${name}, second start`);
      results.push(await measureService(`${name}, second start`, [...argv], dataDir, settleMs));
    }
    // The npm start folder again: a third start, so a second start's figures, with a model configured.
    const dataDir = join(root, 'npm start (dist)'.replace(/\W+/g, '-'));
    o.log('rss: npm start (dist), model configured');
    results.push(
      await measureService('npm start (dist), second start, LLM_BASE_URL set', [...dist], dataDir, settleMs, {
        LLM_BASE_URL: 'http://127.0.0.1:9/v1',
        LLM_API_KEY: 'sk-none',
      }),
    );
    // The same, with V8's default young generation (what npm start's node flags change).
    o.log('rss: npm start (dist), second start, without its node flags');
    results.push(await measureService('npm start (dist), second start, without its node flags', ['dist/main.js'], dataDir, settleMs));
    const copy = join(root, 'floor-db');
    cpSync(join(dataDir, 'pglite'), copy, { recursive: true });
    rmSync(join(copy, 'pglite.lock'), { force: true });
    o.log('rss: floor (PGlite alone)');
    results.push(await measureFloor('floor: node + PGlite, shared_buffers 16MB', copy, settleMs, '16MB'));
    results.push(await measureFloor("floor: node + PGlite, PGlite's defaults", copy, settleMs));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const floor = results.find((r) => r.run.startsWith('floor: node + PGlite, shared'))!;
  // The targets are the embedded default's: what `npm start` runs (the sources under tsx are shown for comparison).
  // The row without npm start's node flags is a comparison, not npm start.
  const npmStart = results.filter((r) => r.run.startsWith('npm start') && !r.run.includes('without'));
  const second = npmStart.filter((r) => r.run.includes('second start'));
  const rows = results.map((r) => [
    r.run,
    fmtInt(r.rssMb),
    r.heapMb ?? '',
    r.externalMb ?? '',
    r.otherMb ?? '',
    r.threads,
    r.readySeconds ?? '',
    r.run.startsWith('floor') ? '' : `${(r.rssMb / floor.rssMb).toFixed(2)}x`,
  ]);
  const worst = Math.max(...npmStart.map((r) => r.rssMb));
  const report = table('rss: the embedded default at rest (MB)', ['run', 'RSS', 'JS heap', 'external', 'other', 'threads', 'ready s', 'vs floor'], rows, [
    `target: npm start's RSS <= ${TARGET_MB} MB after start-up settles (${settleMs / 1000} s after ready): ${verdict(worst <= TARGET_MB)} (largest ${worst} MB)`,
    `target: npm start ready < ${TARGET_READY_S} s on a second start: ${verdict(second.every((r) => (r.readySeconds ?? Infinity) < TARGET_READY_S))}`,
    'external holds PGlite’s WASM memory; other = RSS - JS heap - external (code, the runtime, native allocations)',
    'floor: a bare Node process holding only PGlite on a copy of the same database (same run)',
  ]);
  return { results, report: report + '\n' };
}
