/** Plain-text tables and number formatting for the console report. */

export const fmtInt = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? 'n/a' : Math.round(n).toLocaleString('en-US'));
export const fmtMs = (us: number | undefined) => (us === undefined || !Number.isFinite(us) ? 'n/a' : (us / 1000).toFixed(us < 10_000 ? 2 : 1));
export const fmtRatio = (r: number | undefined) => (r === undefined || !Number.isFinite(r) ? 'n/a' : `${r.toFixed(2)}x`);
export const fmtPct = (r: number | undefined) => (r === undefined || !Number.isFinite(r) ? 'n/a' : `${(r * 100).toFixed(0)}%`);

export function table(title: string, head: string[], rows: (string | number)[][], notes: string[] = []): string {
  const cells = [head, ...rows.map((r) => r.map(String))];
  const w = head.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join(' | ')} |`;
  const sep = `|${w.map((x) => '-'.repeat(x + 2)).join('|')}|`;
  return [``, `## ${title}`, line(head), sep, ...rows.map((r) => line(r.map(String))), ...notes.map((n) => `  ${n}`)].join('\n');
}

export function verdict(ok: boolean | undefined): string {
  return ok === undefined ? 'n/a' : ok ? 'met' : 'NOT met';
}
