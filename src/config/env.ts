/**
 * Readers of one environment variable each: a default for an unset value, the exact variable
 * name and reason when a value is bad.
 */
import { ConfigError } from './errors.js';

export type Env = Record<string, string | undefined>;

/** Unset, empty and whitespace-only values all mean "use the default". */
export const unset = (v: string | undefined): v is undefined => v === undefined || v.trim() === '';

export function str(env: Env, name: string, def: string): string {
  const v = env[name];
  return unset(v) ? def : v;
}

export function optStr(env: Env, name: string): string | undefined {
  const v = env[name];
  return unset(v) ? undefined : v;
}

export function bool(env: Env, name: string, def: boolean): boolean {
  const v = env[name];
  if (unset(v)) return def;
  const s = v.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(s)) return true;
  if (['0', 'false', 'no', 'off'].includes(s)) return false;
  throw new ConfigError(name, `expected a boolean (0/1/true/false), got ${JSON.stringify(v)}`);
}

export function num(env: Env, name: string, def: number, opts: { min?: number; max?: number; int?: boolean } = {}): number {
  const v = env[name];
  // Number(' ') is 0: a blank value must not become a silent zero.
  if (unset(v)) return def;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new ConfigError(name, `expected a number, got ${JSON.stringify(v)}`);
  if (opts.int && !Number.isInteger(n)) throw new ConfigError(name, `expected an integer, got ${JSON.stringify(v)}`);
  if (opts.min !== undefined && n < opts.min) throw new ConfigError(name, `must be >= ${opts.min}, got ${n}`);
  if (opts.max !== undefined && n > opts.max) throw new ConfigError(name, `must be <= ${opts.max}, got ${n}`);
  return n;
}

export function oneOf<T extends string>(env: Env, name: string, def: T, allowed: readonly T[]): T {
  const raw = str(env, name, def);
  const v = raw.trim().toLowerCase() as T;
  if (!allowed.includes(v)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
  return v;
}

/** A shared secret: long enough that guessing it over the network is hopeless. */
export function internalToken(env: Env, name: string): string | undefined {
  const v = optStr(env, name)?.trim();
  if (v !== undefined && v.length < 32) throw new ConfigError(name, `must be at least 32 characters (e.g. openssl rand -base64 48), got ${v.length}`);
  return v;
}

/** An http(s) URL (a vendor's base URL): checked at start-up so a typo is not a runtime surprise. */
export function httpUrl(env: Env, name: string, def: string): string {
  const v = str(env, name, def).trim();
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(name, `expected an http(s) URL, got ${JSON.stringify(v)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(name, `expected an http(s) URL, got ${JSON.stringify(v)}`);
  return v;
}
