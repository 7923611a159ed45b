/**
 * Version strings of templates (and, with a twin in skills/, of skills): semver-like,
 * `MAJOR[.MINOR[.PATCH]][-PRERELEASE]`, numbers without leading zeros, no build metadata
 * (it would make two different strings equal in precedence). Missing parts count as 0, so
 * `1.1` and `1.1.0` are the same version (a catalogue refuses to hold both).
 */

/** At most this many characters: keeps keys and URLs short and comparisons cheap. */
export const MAX_VERSION_LENGTH = 64;

const VERSION_RE = /^(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?:\.(0|[1-9]\d*))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

interface Parsed {
  nums: [string, string, string];
  pre: string[];
}

function parse(v: string): Parsed | undefined {
  if (v.length > MAX_VERSION_LENGTH) return undefined;
  const m = VERSION_RE.exec(v);
  if (!m) return undefined;
  return { nums: [m[1], m[2] ?? '0', m[3] ?? '0'], pre: m[4] ? m[4].split('.') : [] };
}

/** True for a version string this catalogue accepts. */
export function isVersion(v: unknown): v is string {
  return typeof v === 'string' && parse(v) !== undefined;
}

/** Decimal strings without leading zeros, compared as numbers of any size. */
const cmpNum = (a: string, b: string) => (a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0);
const NUMERIC = /^\d+$/;

/**
 * Version order (semver precedence): numbers part by part; a pre-release sorts before its
 * release; pre-release identifiers compare numerically when both are numbers, numbers before
 * words, words in ASCII order, a shorter list first when it is a prefix of the other.
 * Throws on a string that is not a version.
 */
export function compareVersions(a: string, b: string): number {
  const pa = parse(a);
  const pb = parse(b);
  if (!pa) throw new Error(`not a version: ${JSON.stringify(a)}`);
  if (!pb) throw new Error(`not a version: ${JSON.stringify(b)}`);
  for (let i = 0; i < 3; i++) {
    const c = cmpNum(pa.nums[i], pb.nums[i]);
    if (c !== 0) return Math.sign(c);
  }
  if (pa.pre.length === 0 || pb.pre.length === 0) return pa.pre.length === pb.pre.length ? 0 : pa.pre.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.min(pa.pre.length, pb.pre.length); i++) {
    const x = pa.pre[i];
    const y = pb.pre[i];
    const xn = NUMERIC.test(x);
    const yn = NUMERIC.test(y);
    let c: number;
    if (xn && yn) c = cmpNum(x.replace(/^0+(?=\d)/, ''), y.replace(/^0+(?=\d)/, ''));
    else if (xn !== yn) c = xn ? -1 : 1;
    else c = x < y ? -1 : x > y ? 1 : 0;
    if (c !== 0) return Math.sign(c);
  }
  return Math.sign(pa.pre.length - pb.pre.length);
}

/** True for a pre-release version (`1.0.0-rc.1`). */
export const isPrerelease = (v: string): boolean => (parse(v)?.pre.length ?? 0) > 0;

/**
 * The version "latest" means: the highest release, or the highest pre-release when there is
 * no release yet. Undefined for an empty list.
 */
export function latestVersion(versions: readonly string[]): string | undefined {
  const releases = versions.filter((v) => !isPrerelease(v));
  const pool = releases.length > 0 ? releases : versions;
  let best: string | undefined;
  for (const v of pool) if (best === undefined || compareVersions(v, best) > 0) best = v;
  return best;
}
