/**
 * Inline citations: the synthesiser cites the numbered source list it was given with `[n]`
 * markers (`[1]`, `[1, 3]`, `[1; 3]`, `[2-4]`, `[1](url)`); afterwards the markers are renumbered
 * in the order they first appear, so that `citations[n-1]` is the source of every `[n]` of the
 * answer: every marker resolves, and no citation is left that the answer does not cite.
 *
 * Which brackets are citations. Code is never touched: fenced blocks and inline code spans
 * (`arr[0]`, `x[1]`) are left as they are. Outside code, a bracket of numbers is a citation
 * when every number in it could be a source number: an integer from 1 to MAX_SOURCE_NUMBER,
 * a range ascending and at most MAX_RANGE long. Its numbers that name no listed source are then
 * removed (the whole marker when none is left): the synthesiser meant a source by them, but one
 * it may not cite (a search result nobody read, a number copied from a research agent's notes).
 * Any other bracket (`[0]`, a year `[2023]`, `[2020-2023]`, `[5-2]`, `[1, 2020]`) is not a
 * citation and is left exactly as written.
 */

export interface Renumbered {
  text: string;
  /** The listed sources the answer cites (their 1-based numbers in the list), in citation order. */
  cited: number[];
}

const MARKER = /(\s?)\[(\s*\d+(?:\s*[,;–-]\s*\d+)*\s*)\](\([^()\s]*\))?/g;
/** The largest number a bracket may hold and still be a citation (a synthesiser lists at most a few dozen sources). */
export const MAX_SOURCE_NUMBER = 99;
const MAX_RANGE = 20;

/** The numbers of one marker's inside (`1, 3`, `2-4`), or undefined when it is not a citation. */
function numbersOf(inner: string): number[] | undefined {
  const out: number[] = [];
  const ok = (n: number) => Number.isInteger(n) && n >= 1 && n <= MAX_SOURCE_NUMBER;
  for (const part of inner.split(/[,;]/)) {
    const range = /^\s*(\d+)\s*[–-]\s*(\d+)\s*$/.exec(part);
    if (range) {
      const a = Number(range[1]);
      const b = Number(range[2]);
      if (!ok(a) || !ok(b) || b < a || b - a > MAX_RANGE) return undefined;
      for (let n = a; n <= b; n++) out.push(n);
    } else {
      const n = Number(part.trim());
      if (!ok(n)) return undefined;
      out.push(n);
    }
  }
  return out;
}

/**
 * `text` cut into prose and code: even indexes hold prose, odd ones code (a fenced block, which
 * runs to the end when never closed, and with `inline` an inline code span, which a blank line
 * ends, as in CommonMark). A backtick run that no run of the same length closes is prose.
 */
export function splitCode(text: string, inline = true): string[] {
  const out: string[] = [];
  let from = 0;
  let i = 0;
  const code = (end: number) => {
    out.push(text.slice(from, i), text.slice(i, end));
    from = i = end;
  };
  const fence = / {0,3}(?:(`{3,})[^`\n]*|(~{3,})[^\n]*)(?=\n|$)/y;
  while (i < text.length) {
    if (i === 0 || text[i - 1] === '\n') {
      fence.lastIndex = i;
      const f = fence.exec(text);
      if (f) {
        const mark = f[1] ?? f[2]!;
        const close = new RegExp(`^ {0,3}${mark[0] === '`' ? '`' : '~'}{${mark.length},}[ \\t]*$`, 'gm');
        close.lastIndex = i + f[0].length;
        const c = close.exec(text);
        code(c ? c.index + c[0].length : text.length);
        continue;
      }
    }
    if (inline && text[i] === '`') {
      let len = 1;
      while (text[i + len] === '`') len++;
      const blank = /\n[ \t]*\n/g;
      blank.lastIndex = i;
      const paragraphEnd = blank.exec(text)?.index ?? text.length;
      const runs = /`+/g;
      runs.lastIndex = i + len;
      let end = -1;
      for (let r = runs.exec(text); r && r.index < paragraphEnd; r = runs.exec(text)) {
        if (r[0].length === len) {
          end = r.index + len;
          break;
        }
      }
      if (end > 0) code(end);
      else i += len;
      continue;
    }
    i++;
  }
  out.push(text.slice(from));
  return out;
}

/** `text` with `fn` applied to its prose only. */
const inProse = (text: string, fn: (prose: string) => string) =>
  splitCode(text)
    .map((part, i) => (i % 2 ? part : fn(part)))
    .join('');

/** Renumbers the citations of `text`, whose sources are a list of `listed` (numbered 1..listed). */
export function renumberCitations(text: string, listed: number): Renumbered {
  const newOf = new Map<number, number>();
  const cited: number[] = [];
  const out = inProse(text, (prose) =>
    prose.replace(MARKER, (whole: string, space: string, inner: string) => {
      const numbers = numbersOf(inner);
      if (!numbers) return whole;
      const nums: number[] = [];
      for (const n of numbers) {
        if (n > listed) continue;
        if (!newOf.has(n)) {
          cited.push(n);
          newOf.set(n, cited.length);
        }
        const m = newOf.get(n)!;
        if (!nums.includes(m)) nums.push(m);
      }
      return nums.length ? `${space}[${nums.sort((a, b) => a - b).join(', ')}]` : '';
    }),
  );
  return { text: out, cited };
}

/** The citation numbers of a text (each number once, in order of first appearance). */
export function markersOf(text: string): number[] {
  const seen: number[] = [];
  for (const [i, part] of splitCode(text).entries()) {
    if (i % 2) continue;
    for (const m of part.matchAll(MARKER)) for (const n of numbersOf(m[2]!) ?? []) if (!seen.includes(n)) seen.push(n);
  }
  return seen;
}

/** `text` without its citation markers (any other bracket kept). */
export const withoutMarkers = (text: string): string =>
  inProse(text, (prose) => prose.replace(MARKER, (whole: string, _space: string, inner: string) => (numbersOf(inner) ? '' : whole)));
