/**
 * Version strings of templates and skills: semver-like, `MAJOR[.MINOR[.PATCH]][-PRERELEASE]`,
 * numbers without leading zeros, no build metadata (it would make two different strings equal
 * in precedence). Missing parts count as 0, so `1.1` and `1.1.0` are the same version (a
 * catalogue refuses to hold both).
 *
 * Pre-release precedence is the `semver` package's. The release numbers are compared here, as
 * decimal strings: this format allows numbers beyond 2^53, which `semver` refuses.
 */
import { SemVer } from 'semver';

/** At most this many characters: keeps keys and URLs short and comparisons cheap. */
export const MAX_VERSION_LENGTH = 64;

const VERSION_RE = /^(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?:\.(0|[1-9]\d*))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

interface Parsed {
  nums: [string, string, string];
  /** The pre-release as a version of its own (0.0.0-PRE, or 0.0.0 for a release). */
  pre: SemVer;
}

function parse(v: string): Parsed | undefined {
  if (v.length > MAX_VERSION_LENGTH) return undefined;
  const m = VERSION_RE.exec(v);
  if (!m) return undefined;
  // loose: a numeric identifier with leading zeros ("rc.01") is accepted here and counts as its number.
  return { nums: [m[1], m[2] ?? '0', m[3] ?? '0'], pre: new SemVer(m[4] ? `0.0.0-${m[4]}` : '0.0.0', { loose: true }) };
}

/** True for a version string that templates and skills accept. */
export function isVersion(v: unknown): v is string {
  return typeof v === 'string' && parse(v) !== undefined;
}

/** Decimal strings without leading zeros, compared as numbers of any size. */
const cmpNum = (a: string, b: string) => (a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0);

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
  return pa.pre.comparePre(pb.pre);
}

/** True for a pre-release version (`1.0.0-rc.1`). */
export const isPrerelease = (v: string): boolean => (parse(v)?.pre.prerelease.length ?? 0) > 0;

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
