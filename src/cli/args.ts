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
