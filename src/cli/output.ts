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
