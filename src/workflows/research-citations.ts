/**
 * Inline citations: the synthesiser cites the numbered source list it was given with `[n]`
 * markers (`[1]`, `[1, 3]`, `[2-4]`, `[1](url)`); afterwards the markers are renumbered in the
 * order they first appear, so that `citations[n-1]` is the source of every `[n]` of the answer:
 * every marker resolves, a number naming no listed source is removed (its marker too when
 * nothing is left of it), and no citation is left that the answer does not cite. Fenced code
 * blocks are left as they are.
 */

export interface Renumbered {
  text: string;
  /** The listed sources the answer cites (their 1-based numbers in the list), in citation order. */
  cited: number[];
}

const MARKER = /(\s?)\[(\s*\d+(?:\s*[,;–-]\s*\d+)*\s*)\](\([^()\s]*\))?/g;
const MAX_RANGE = 20;

/** The numbers of one marker's inside: `1, 3`, `2-4`. */
function numbersOf(inner: string): number[] {
  const out: number[] = [];
  for (const part of inner.split(/[,;]/)) {
    const range = /^\s*(\d+)\s*[–-]\s*(\d+)\s*$/.exec(part);
    if (range) {
      const a = Number(range[1]);
      const b = Number(range[2]);
      if (b >= a && b - a <= MAX_RANGE) for (let n = a; n <= b; n++) out.push(n);
      else out.push(a, b);
    } else if (part.trim()) out.push(Number(part.trim()));
  }
  return out;
}

/** Renumbers the markers of `text` that cite a source of a list of `listed` sources. */
export function renumberCitations(text: string, listed: number): Renumbered {
  const newOf = new Map<number, number>();
  const cited: number[] = [];
  const parts = text.split(/(```[\s\S]*?```)/);
  const out = parts.map((part, i) => {
    if (i % 2 === 1) return part;
    return part.replace(MARKER, (_m, space: string, inner: string) => {
      const nums: number[] = [];
      for (const n of numbersOf(inner)) {
        if (!Number.isInteger(n) || n < 1 || n > listed) continue;
        if (!newOf.has(n)) {
          cited.push(n);
          newOf.set(n, cited.length);
        }
        const m = newOf.get(n)!;
        if (!nums.includes(m)) nums.push(m);
      }
      return nums.length ? `${space}[${nums.sort((a, b) => a - b).join(', ')}]` : '';
    });
  });
  return { text: out.join(''), cited };
}

/** The citation numbers of a text whose markers were renumbered (each number once, in order). */
export function markersOf(text: string): number[] {
  const seen: number[] = [];
  for (const m of text.matchAll(MARKER)) for (const n of numbersOf(m[2]!)) if (!seen.includes(n)) seen.push(n);
  return seen;
}
