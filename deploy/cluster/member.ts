/**
 * One member of the cluster (the Member contract of types.ts) built from a recipe: how to
 * prepare and launch it, how to probe it, how to stop it. The same member object restarts the
 * same process with the same ports and data after a kill, and reports every change of its
 * process (`changed`) so that the state file stays true.
 */
import type { Watchdog } from '../../src/embedded/watchdog.js';
import { isAlive, launch, logTail, signalRef, stopRef, type Command, type ProcRef } from './process.js';
import type { Member, MemberKind } from './types.js';

export interface MemberRecipe {
  name: string;
  kind: MemberKind;
  ports: Record<string, number>;
  log: string;
  /** Prepares what the process needs (config file, initdb) and returns its command line. */
  command(): Promise<Command>;
  probe(): Promise<boolean>;
  /** How it is asked to stop (PostgreSQL: SIGINT, its fast shutdown) and how long it gets before SIGKILL. */
  stopSignal: NodeJS.Signals;
  stopGraceMs: number;
  readyTimeoutMs: number;
  /**
   * Launches allowed when the process exits before it is ready, as a supervisor (systemd's
   * Restart=on-failure, Kubernetes) would: a service process gives up its start when a
   * JetStream request times out, which happens while a loaded machine creates R3 streams and
   * in the seconds after the loss of a NATS node that led some of them.
   */
  launches: number;
}

const PROBE_INTERVAL_MS = 100;

export class ClusterMember implements Member {
  readonly name: string;
  readonly kind: MemberKind;
  readonly ports: Readonly<Record<string, number>>;
  readonly log: string;
  private watchdog: Watchdog | undefined;
  private starting: Promise<void> | undefined;

  constructor(
    private readonly recipe: MemberRecipe,
    private readonly detached: boolean,
    private readonly changed: () => Promise<void>,
    /** The process a state file names, when attaching to a running cluster. */
    private proc?: ProcRef,
  ) {
    this.name = recipe.name;
    this.kind = recipe.kind;
    this.ports = recipe.ports;
    this.log = recipe.log;
  }

  /** The process, while it runs (for the state file). */
  get process(): ProcRef | undefined {
    return this.proc && isAlive(this.proc) ? this.proc : undefined;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  signal(sig: NodeJS.Signals): void {
    if (this.proc) signalRef(this.proc, sig);
  }

  /** `signal`: the cluster's start was abandoned; no launch after it, and the wait for readiness ends. */
  start(signal?: AbortSignal): Promise<void> {
    this.starting ??= this.startOnce(signal).finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async startOnce(signal: AbortSignal | undefined): Promise<void> {
    const deadline = Date.now() + this.recipe.readyTimeoutMs;
    let launches = 0;
    for (;;) {
      signal?.throwIfAborted();
      if (!this.process) {
        if (launches === this.recipe.launches) {
          throw new Error(`${this.name} exited before it was ready (launched ${launches} times; log ${this.log}):\n${await logTail(this.log)}`);
        }
        launches++;
        await this.watchdog?.dismiss();
        const launched = await launch(await this.recipe.command(), this.log, this.detached);
        this.proc = launched.ref;
        this.watchdog = launched.watchdog;
        await this.changed();
        continue;
      }
      if (await this.recipe.probe()) return;
      if (Date.now() > deadline)
        throw new Error(`${this.name} not ready after ${this.recipe.readyTimeoutMs / 1000} s (log ${this.log}):\n${await logTail(this.log)}`);
      await new Promise((r) => setTimeout(r, PROBE_INTERVAL_MS));
    }
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    if (proc) await stopRef(proc, this.recipe.stopSignal, this.recipe.stopGraceMs);
    await this.watchdog?.dismiss();
    this.watchdog = undefined;
    if (proc && this.proc === proc) {
      this.proc = undefined;
      await this.changed();
    }
  }

  async ready(): Promise<boolean> {
    return !!this.process && (await this.recipe.probe());
  }
}
