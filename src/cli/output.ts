/**
 * Where output goes (results on stdout, progress and errors on stderr, so that
 * `taskorch submit ... > answer.txt` keeps only the answer) and how values read.
 */
export const out = (s: string) => void process.stdout.write(s);
export const err = (s: string) => void process.stderr.write(s);
const colorOn = process.stderr.isTTY === true && process.stderr.hasColors?.() === true;
export const paint = (code: string, s: string) => (colorOn ? `\x1b[${code}m${s}\x1b[0m` : s);

/** TASK_STATUS_COMPLETED -> completed */
export const statusWord = (s: unknown) =>
  String(s ?? 'unknown')
    .replace(/^TASK_STATUS_/, '')
    .toLowerCase();
export const modeWord = (s: unknown) =>
  String(s ?? '')
    .replace(/^EXECUTION_MODE_/, '')
    .toLowerCase();

export function usageText(u: any): string {
  if (!u || typeof u !== 'object') return '';
  const parts = [`${u.total_tokens ?? 0} tokens`];
  if (u.input_tokens !== undefined || u.output_tokens !== undefined) parts[0] += ` (${u.input_tokens ?? 0} in, ${u.output_tokens ?? 0} out)`;
  const cost = u.estimated_cost ?? u.cost_usd;
  if (typeof cost === 'number') parts.push(`$${cost.toFixed(4)}`);
  return parts.join(', ');
}

/** `2024-05-01T10:00:00.123Z` -> `2024-05-01 10:00:00Z`; '' for none. */
export const when = (s: unknown) =>
  s
    ? String(s)
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
    : '';

/** Text on one line (newlines and runs of blanks as one space). */
export const oneLine = (s: unknown) =>
  String(s ?? '')
    .replace(/\s+/g, ' ')
    .trim();

/** 1234 -> `1.2 s`, 87 -> `87 ms`; '' for none. */
export const duration = (ms: unknown) => (typeof ms !== 'number' ? '' : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

/** A gateway's JSON answer on stdout, as it came (pretty-printed). */
export const printJson = (v: unknown) => out(`${JSON.stringify(v, null, 2)}\n`);

/** Label-value lines (`label     value`), the empty values left out. */
export function fields(rows: [string, unknown][]): void {
  const w = Math.max(...rows.map(([k]) => k.length)) + 1;
  for (const [k, v] of rows) if (v !== undefined && v !== null && v !== '') out(`${k.padEnd(w)} ${oneLine(v)}\n`);
}

/**
 * Rows under a header in aligned columns on stdout; at a terminal the last column is cut to
 * the width of the screen (elsewhere it is kept whole, for grep and cut).
 */
export function table(head: string[], rows: string[][]): void {
  const n = head.length - 1;
  const w = head.slice(0, n).map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const width = process.stdout.isTTY ? process.stdout.columns || 120 : Infinity;
  const line = (r: string[]) => {
    const lead = r
      .slice(0, n)
      .map((c, i) => `${c.padEnd(w[i])}  `)
      .join('');
    const room = Math.max(width - lead.length, 20);
    const last = r[n] ?? '';
    return `${lead}${last.length > room ? `${last.slice(0, room - 1)}…` : last}`.trimEnd() + '\n';
  };
  out(line(head));
  for (const r of rows) out(line(r));
}
