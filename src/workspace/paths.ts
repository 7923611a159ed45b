/**
 * Path rules of the workspace: a client path's segments (no traversal, no absolute paths, no
 * NUL), URL decoding, and the containment checks of real paths against the session folder.
 */
import { realpath, type FileHandle } from 'node:fs/promises';
import { sep } from 'node:path';
import { badRequest } from '../kernel/index.js';
import { TRAVERSAL_MESSAGE } from './model.js';

export const traversal = () => badRequest(TRAVERSAL_MESSAGE);

/**
 * Validates a decoded client path and returns its segments (empty for the root).
 * `allowLeadingSlash`: the listing's `path` query is written `/sub`; the download's wildcard
 * part comes after `/files/` so any leading slash there means an absolute path.
 */
export function parseWorkspacePath(raw: string, opts: { allowLeadingSlash: boolean }): string[] {
  if (raw.includes('\0')) throw traversal();
  let p = raw;
  if (opts.allowLeadingSlash && p.startsWith('/') && !p.startsWith('//')) p = p.slice(1);
  if (p.startsWith('/') || p.startsWith('\\') || /^[A-Za-z]:/.test(p)) throw traversal();
  const segs = p.split(/[\\/]/);
  if (segs.some((s) => s === '..')) throw traversal();
  return segs.filter((s) => s !== '' && s !== '.');
}

/** Decodes a raw (percent-encoded) URL path part; malformed escapes → 400. */
export function decodeUrlPath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest('invalid path: malformed percent-encoding');
  }
}

export const toClientPath = (segs: string[]) => '/' + segs.join('/');

export function isInside(base: string, real: string): boolean {
  return real === base || real.startsWith(base.endsWith(sep) ? base : base + sep);
}

export function compareSegments(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}

export const errno = (err: unknown) => (err as NodeJS.ErrnoException)?.code;
export const isMissing = (err: unknown) => ['ENOENT', 'ENOTDIR', 'ELOOP'].includes(errno(err) ?? '');

/**
 * Real path of a link found while writing; it must exist and stay inside `base` (a dangling
 * link is refused too: following it would create its target, which could be anywhere).
 */
export async function realInside(base: string, link: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(link);
  } catch (err) {
    if (isMissing(err)) throw traversal();
    throw err;
  }
  if (!isInside(base, real)) throw traversal();
  return real;
}

/** Real path of an open descriptor (Linux), or undefined where /proc is not available. */
export async function fdRealPath(fh: FileHandle): Promise<string | undefined> {
  try {
    return await realpath(`/proc/self/fd/${fh.fd}`);
  } catch {
    return undefined;
  }
}
