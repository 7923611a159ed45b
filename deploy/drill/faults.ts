/**
 * The faults, with the drill as the supervisor (as k8s would be): a SIGKILLed member is
 * started again 1-2 s later; a frozen NATS node (SIGSTOP) is released (SIGCONT) after the
 * freeze; PostgreSQL is restarted (stopped, started again). After each fault the drill waits
 * for full service, which is: every member answers its readiness probe, and a probe task
 * submitted through each gateway (that gateway only) completes. Time to full service counts
 * from the fault (the kill; for the freeze, the release) and so includes the supervisor's
 * 1-2 s, the restart and the probes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster, Member, MemberKind } from '../cluster/types.js';
import type { Submitter } from './tasks.js';

export type FaultKind = 'kill worker' | 'kill gateway' | 'kill orchestrator' | 'kill nats' | 'freeze nats' | 'restart postgres';

export interface FaultRecord {
  kind: FaultKind;
  member: string;
  at: string;
  /** Fault (or release) to full service, ms; undefined when full service did not come back within the limit. */
  toFullServiceMs?: number;
  /** The member's own restart (start() call to ready), ms. */
  restartMs?: number;
  /** Freeze only: SIGSTOP to a probe completing through each gateway while the node is frozen, ms. */
  servedWhileFrozenMs?: number;
  error?: string;
}

const KILLS: FaultKind[] = ['kill worker', 'kill gateway', 'kill orchestrator', 'kill nats'];
const KIND_OF: Record<FaultKind, MemberKind> = {
  'kill worker': 'worker',
  'kill gateway': 'gateway',
  'kill orchestrator': 'orchestrator',
  'kill nats': 'nats',
  'freeze nats': 'nats',
  'restart postgres': 'postgres',
};
/** Full service not back within this is recorded as such (and the drill moves on). */
const RECOVERY_LIMIT_MS = 180_000;

/** The order of the faults: the kills round robin, the freeze a third of the way, the PostgreSQL restart two thirds. */
export function faultPlan(killsEach: number): FaultKind[] {
  const plan: FaultKind[] = [];
  for (let i = 0; i < killsEach; i++) plan.push(...KILLS);
  plan.splice(Math.round(plan.length / 3), 0, 'freeze nats');
  plan.splice(Math.round((plan.length * 2) / 3), 0, 'restart postgres');
  return plan;
}

const pickOf = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)]!;

export class Supervisor {
  /** A member frozen now (released on abort, so that stop() can end it). */
  private frozen: Member | undefined;

  constructor(
    private readonly cluster: Cluster,
    /** Submits the probes (its own error book: the probes are the drill's, not a client's). */
    private readonly submitter: Submitter,
    private readonly freezeMs: number,
    private readonly log: (s: string) => void,
  ) {}

  async inject(kind: FaultKind): Promise<FaultRecord> {
    const m = pickOf(this.cluster.members.filter((x) => x.kind === KIND_OF[kind]));
    const rec: FaultRecord = { kind, member: m.name, at: new Date().toISOString() };
    this.log(`fault: ${kind} (${m.name})`);
    try {
      let t0 = Date.now();
      if (kind === 'freeze nats') {
        m.signal('SIGSTOP');
        this.frozen = m;
        // Served while frozen only if the probes completed before the release.
        const done = this.fullService(m, this.freezeMs).then((ok) => (ok && Date.now() - t0 <= this.freezeMs ? Date.now() - t0 : undefined));
        await sleep(this.freezeMs);
        m.signal('SIGCONT');
        this.frozen = undefined;
        rec.servedWhileFrozenMs = await done;
        t0 = Date.now();
      } else if (kind === 'restart postgres') {
        await m.stop();
        await sleep(1000 + Math.random() * 1000);
        rec.restartMs = await timed(() => m.start());
      } else {
        m.signal('SIGKILL');
        await this.exited(m);
        await sleep(1000 + Math.random() * 1000);
        rec.restartMs = await timed(() => m.start());
      }
      if (await this.fullService()) rec.toFullServiceMs = Date.now() - t0;
      else rec.error = `no full service within ${RECOVERY_LIMIT_MS / 1000} s`;
    } catch (err) {
      rec.error = (err as Error).message.split('\n')[0];
    }
    this.log(`  full service after ${rec.toFullServiceMs !== undefined ? `${(rec.toFullServiceMs / 1000).toFixed(1)} s` : `never (${rec.error})`}`);
    return rec;
  }

  private async exited(m: Member): Promise<void> {
    const end = Date.now() + 10_000;
    while (m.pid !== undefined && Date.now() < end) await sleep(50);
  }

  /** Waits for full service (every member but `skip` ready, a probe task through each gateway completed); false after the limit. */
  async fullService(skip?: Member, limitMs = RECOVERY_LIMIT_MS): Promise<boolean> {
    const end = Date.now() + limitMs;
    while (Date.now() < end) {
      const ready = await Promise.all(this.cluster.members.filter((x) => x !== skip).map((x) => x.ready().catch(() => false)));
      if (ready.every(Boolean)) {
        const probes = await Promise.all(this.cluster.gateways.map((g) => this.probe(g, end)));
        if (probes.every(Boolean)) return true;
      }
      await sleep(200);
    }
    return false;
  }

  /** A task submitted through gateway `g` only, followed there until it completes. */
  private async probe(g: string, end: number): Promise<boolean> {
    const id = await this.submitter.submitOne(g, Math.max(1000, end - Date.now()));
    while (id && Date.now() < end) {
      const s = await this.submitter.status(id, g);
      if (s?.status === 'TASK_STATUS_COMPLETED') return true;
      if (s && s.status !== 'TASK_STATUS_QUEUED' && s.status !== 'TASK_STATUS_RUNNING') return false;
      await sleep(100);
    }
    return false;
  }

  /** Releases a frozen member (Ctrl-C, watchdog): a stopped process cannot be stopped cleanly. */
  release(): void {
    this.frozen?.signal('SIGCONT');
    this.frozen = undefined;
  }
}

async function timed(f: () => Promise<void>): Promise<number> {
  const t = Date.now();
  await f();
  return Date.now() - t;
}
