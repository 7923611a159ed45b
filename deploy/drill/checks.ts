/**
 * The drill's verdicts, kept apart from the load that feeds them so that each rule can be
 * tested on its own (test/drill-checks.test.ts): how a client-visible error is classified,
 * whether a stream delivered every seq once and in order across its resumes, when a second
 * claim grant is a double grant rather than a re-offer after a lost holder, and which
 * minute boundaries of an every-minute schedule ran twice or not at all.
 */

/** How one HTTP attempt ended, as a client (or the load balancer in front of it) sees it. */
export type Outcome =
  | { kind: 'ok'; status: number }
  /** Nothing listens (the process is down): a load balancer fails over, the client sees nothing. */
  | { kind: 'refused' }
  /** The connection died under the request (its process was killed mid-answer). */
  | { kind: 'cut' }
  /** No answer within the hang limit. */
  | { kind: 'hang' }
  | { kind: 'status'; status: number; retryAfter: boolean };

/** The error kinds allowed under faults: fail-over, a killed process's cut connection, and 503 with Retry-After. */
const ALLOWED = new Set(['refused', 'cut', '503 with Retry-After']);

/** The label an error outcome is counted under in the report. */
export function errorKind(o: Exclude<Outcome, { kind: 'ok' }>): string {
  if (o.kind !== 'status') return o.kind;
  if (o.status === 503) return o.retryAfter ? '503 with Retry-After' : '503 without Retry-After';
  return `HTTP ${o.status}`;
}

export const allowedError = (kind: string) => ALLOWED.has(kind);

/** Maps a fetch failure to refused / cut / hang (undici reports the cause on `err.cause`). */
export function failureOutcome(err: unknown): Outcome {
  const e = err as { name?: string; cause?: { code?: string; name?: string } };
  if (e?.name === 'TimeoutError' || e?.cause?.name === 'TimeoutError') return { kind: 'hang' };
  const code = e?.cause?.code ?? '';
  if (code === 'ECONNREFUSED') return { kind: 'refused' };
  return { kind: 'cut' };
}

/** Client-visible errors by kind. */
export class ErrorBook {
  readonly counts = new Map<string, number>();
  /** A few examples of each kind (where, when) for the report. */
  readonly examples = new Map<string, string[]>();

  add(kind: string, where: string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    const ex = this.examples.get(kind) ?? [];
    if (ex.length < 5) ex.push(`${new Date().toISOString()} ${where}`);
    this.examples.set(kind, ex);
  }

  /** Errors of a kind that must never happen (500s, hangs, a 503 without Retry-After, other statuses). */
  bad(): number {
    let n = 0;
    for (const [k, v] of this.counts) if (!allowedError(k)) n += v;
    return n;
  }
}

/**
 * One client following one workflow's events, across reconnects: each seq must arrive once
 * and in order; a seq at or below the last one is a duplicate, a jump (or a REPLAY_GAP notice)
 * is a gap.
 */
export class SeqCheck {
  last = 0;
  gaps = 0;
  duplicates = 0;
  ended = false;
  resumes = 0;

  see(seq: number, type: string): void {
    if (seq <= this.last) {
      this.duplicates++;
      return;
    }
    if (seq !== this.last + 1) this.gaps++;
    this.last = seq;
    if (type === 'STREAM_END') this.ended = true;
  }

  replayGap(): void {
    this.gaps++;
  }
}

/**
 * Claim grants per daemon message. A message granted again to another connection is a double
 * grant unless the previous holder's connection closed within `lostWithinMs` of its grant
 * (its gateway died before the reply could land: the claim expires and the message is offered
 * again, which the protocol intends).
 */
export class ClaimLedger {
  private grants = new Map<string, { conn: string; at: number }[]>();
  private closedAt = new Map<string, number>();

  constructor(private readonly lostWithinMs: number) {}

  grant(messageId: string, conn: string, at: number): void {
    const g = this.grants.get(messageId) ?? [];
    g.push({ conn, at });
    this.grants.set(messageId, g);
  }

  connClosed(conn: string, at: number): void {
    if (!this.closedAt.has(conn)) this.closedAt.set(conn, at);
  }

  granted(messageId: string): boolean {
    return this.grants.has(messageId);
  }

  /** Double grants and re-grants after a lost holder, over every message; the first few double grants as evidence. */
  tally(): { messages: number; doubles: number; regrantsAfterLostHolder: number; doubleExamples: string[] } {
    let doubles = 0;
    let regrants = 0;
    const doubleExamples: string[] = [];
    for (const [id, g] of this.grants) {
      for (let i = 1; i < g.length; i++) {
        const prev = g[i - 1]!;
        const closed = this.closedAt.get(prev.conn);
        if (closed !== undefined && closed <= g[i]!.at && closed - prev.at <= this.lostWithinMs) regrants++;
        else {
          doubles++;
          if (doubleExamples.length < 10) {
            const at = (t: number) => new Date(t).toISOString().slice(11, 23);
            doubleExamples.push(
              `${id}: ${g.map((x) => `${x.conn} at ${at(x.at)}${this.closedAt.has(x.conn) ? ` (closed ${at(this.closedAt.get(x.conn)!)})` : ''}`).join(', ')}`,
            );
          }
        }
      }
    }
    return { messages: this.grants.size, doubles, regrantsAfterLostHolder: regrants, doubleExamples };
  }
}

export interface ScheduleRun {
  triggered_at: string;
  status: string;
  workflow_id?: string;
}

/**
 * Every minute boundary in (from, to]: how many runs it got. None is a missed run; a run that
 * FAILED without a task (its scheduler died between claim and submit) is missed too; two or
 * more is a double run.
 */
export function scheduleVerdict(runs: ScheduleRun[], from: number, to: number) {
  const byMinute = new Map<number, ScheduleRun[]>();
  for (const r of runs) {
    const t = Date.parse(r.triggered_at);
    byMinute.set(t, [...(byMinute.get(t) ?? []), r]);
  }
  let boundaries = 0;
  let missed = 0;
  let twice = 0;
  let failed = 0;
  const missedAt: string[] = [];
  for (let m = Math.floor(from / 60_000) * 60_000 + 60_000; m <= to; m += 60_000) {
    boundaries++;
    const rs = byMinute.get(m) ?? [];
    const real = rs.filter((r) => r.workflow_id);
    if (real.length === 0) {
      missed++;
      missedAt.push(new Date(m).toISOString());
    }
    if (real.length > 1) twice++;
    failed += real.filter((r) => r.status !== 'COMPLETED' && r.status !== 'RUNNING' && r.status !== 'PENDING').length;
  }
  const offBoundary = runs.filter((r) => Date.parse(r.triggered_at) % 60_000 !== 0).length;
  return { boundaries, missed, twice, failed, offBoundary, missedAt };
}

/** Exact quantile of a small sample set (nearest rank). */
export function quantile(samples: readonly number[], q: number): number {
  if (!samples.length) return NaN;
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}
