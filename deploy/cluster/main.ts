/**
 * `npm run cluster [-- start|stop|status] [--replicas=1|3] [--dir=data/cluster] [--gateways=2]
 * [--workers=3] [--base-port=14200]`: the whole fleet on this machine, started detached (it
 * outlives this command), its state in `<dir>/cluster.json`; `stop` stops the service
 * processes, then NATS, then PostgreSQL; `status` says which member is up.
 */
import { ClusterRunningError, openCluster, startCluster } from './cluster.js';
import { DEFAULT_BASE_PORT } from './layout.js';

const USAGE = `usage: npm run cluster -- [start|stop|status] [--replicas=1|3] [--dir=data/cluster] [--gateways=2] [--workers=3] [--base-port=${DEFAULT_BASE_PORT}]`;

interface Args {
  command: 'start' | 'stop' | 'status';
  replicas: 1 | 3;
  dir: string;
  gateways: number;
  workers: number;
  basePort: number;
}

function int(name: string, v: string): number {
  if (!/^\d+$/.test(v)) throw new Error(`--${name}: a whole number, got ${JSON.stringify(v)}\n${USAGE}`);
  return Number(v);
}

function parseArgs(argv: string[]): Args {
  const a: Args = { command: 'start', replicas: 3, dir: 'data/cluster', gateways: 2, workers: 3, basePort: DEFAULT_BASE_PORT };
  for (const arg of argv) {
    const m = /^--([a-z-]+)=(.*)$/.exec(arg);
    if (!m) {
      if (arg !== 'start' && arg !== 'stop' && arg !== 'status') throw new Error(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
      a.command = arg;
      continue;
    }
    const [, name, v] = m;
    if (name === 'replicas') {
      if (v !== '1' && v !== '3') throw new Error(`--replicas: 1 or 3, got ${JSON.stringify(v)}`);
      a.replicas = v === '1' ? 1 : 3;
    } else if (name === 'dir') a.dir = v;
    else if (name === 'gateways') a.gateways = int(name, v);
    else if (name === 'workers') a.workers = int(name, v);
    else if (name === 'base-port') a.basePort = int(name, v);
    else throw new Error(`unknown option --${name}\n${USAGE}`);
  }
  return a;
}

const STOP_HINT = (dir: string) => `stop it with: npm run cluster -- stop --dir=${dir}`;

async function start(a: Args): Promise<void> {
  const running = openCluster(a.dir);
  if (running?.running()) {
    console.log(`a cluster is already running in ${running.dir}:\n\n${await running.status()}\n\n${STOP_HINT(a.dir)}`);
    return;
  }
  console.log(`starting the cluster in ${a.dir} (R${a.replicas}, ${a.gateways} gateways, ${a.workers} workers) ...`);
  // The members are detached, out of reach of the terminal's Ctrl-C: it abandons the start, and
  // what had started is stopped.
  const interrupted = new AbortController();
  const onSigint = () => {
    console.log('interrupted: stopping what had started ...');
    interrupted.abort(new Error('start interrupted (Ctrl-C); nothing left running'));
  };
  process.once('SIGINT', onSigint);
  try {
    const c = await startCluster({
      dir: a.dir,
      replicas: a.replicas,
      gateways: a.gateways,
      workers: a.workers,
      basePort: a.basePort,
      detached: true,
      signal: interrupted.signal,
    });
    console.log(`\n${c.table()}\n\nready. ${STOP_HINT(a.dir)}`);
  } catch (err) {
    if (!(err instanceof ClusterRunningError)) throw err;
    console.log(`${err.message}\n${STOP_HINT(a.dir)}`);
  } finally {
    process.off('SIGINT', onSigint);
  }
}

async function stop(a: Args): Promise<void> {
  const c = openCluster(a.dir);
  if (!c) return console.log(`no cluster in ${a.dir} (no cluster.json)`);
  if (!c.running()) return console.log(`the cluster in ${c.dir} is not running`);
  console.log(`stopping the cluster in ${c.dir}: service processes, then NATS, then PostgreSQL ...`);
  await c.stop();
  console.log('stopped; the data stays in place');
}

async function status(a: Args): Promise<void> {
  const c = openCluster(a.dir);
  if (!c) return console.log(`no cluster in ${a.dir} (no cluster.json)`);
  console.log(await c.status());
}

try {
  const a = parseArgs(process.argv.slice(2));
  await { start, stop, status }[a.command](a);
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
}
