/** Argument parsing shared by the commands (util.parseArgs, strict): usage errors exit with 2. */
import { parseArgs } from 'node:util';
import { CliError } from './errors.js';

const CONNECTION_OPTIONS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export function parse<O extends Record<string, { type: 'string' | 'boolean'; short?: string }>>(command: string, args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...CONNECTION_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new CliError(`${(e as Error).message}\nSee: taskorch ${command} --help`, 2);
  }
}

export function positiveInt(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new CliError(`--${name} expects a whole number, got ${JSON.stringify(v)}`, 2);
  return Number(v);
}

export function oneTaskId(command: string, positionals: string[]): string {
  if (positionals.length !== 1 || !positionals[0].trim())
    throw new CliError(`${command} needs exactly one task id: taskorch ${command} <task_id> (see taskorch ${command} --help)`, 2);
  return positionals[0].trim();
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The one `<name>` argument of `usage` (e.g. `schedules pause <schedule_id>`), or a usage error. */
export function oneArg(usage: string, name: string, positionals: string[]): string {
  const command = usage.split(' ')[0];
  if (positionals.length !== 1 || !positionals[0].trim())
    throw new CliError(`${usage.split(' <')[0]} needs exactly one ${name}: taskorch ${usage} (see taskorch ${command} --help)`, 2);
  return positionals[0].trim();
}

/** No positional argument (`what` names the command in the message). */
export function noArgs(what: string, positionals: string[]): void {
  if (positionals.length) throw new CliError(`${what} takes no argument, got ${JSON.stringify(positionals[0])} (see taskorch ${what.split(' ')[0]} --help)`, 2);
}

const COMMON_OPTIONS = ['url', 'api-key', 'help', 'json'];

/** A usage error for an option given that `what` (a command and subcommand) does not take. */
export function onlyOptions(what: string, values: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(values).find((k) => values[k] !== undefined && !COMMON_OPTIONS.includes(k) && !allowed.includes(k));
  if (extra) throw new CliError(`${what} does not take --${extra} (see taskorch ${what.split(' ')[0]} --help)`, 2);
}

/** The value of a JSON option: an object, or a usage error naming the option. */
export function jsonObject(name: string, text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new CliError(`${name} is not valid JSON (${(e as Error).message})`, 2);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new CliError(`${name} must be a JSON object, e.g. '{"key": "value"}'`, 2);
  return v as Record<string, unknown>;
}

export function positiveNumber(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v.trim());
  if (!v.trim() || !Number.isFinite(n) || n <= 0) throw new CliError(`--${name} expects a positive number, got ${JSON.stringify(v)}`, 2);
  return n;
}
