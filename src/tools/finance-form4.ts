/**
 * The transactions of one Form 4 (statement of changes in beneficial ownership), read from its
 * XML `ownershipDocument` (https://www.sec.gov/info/edgar/specifications/ownershipxmltechspec):
 * the reporting owner(s) and their relationship to the issuer, and each row of the
 * non-derivative table (common stock bought, sold, granted, withheld...). Derivative rows
 * (options, units) are left out: their shares are rights, not stock. The XML parser (linkedom)
 * is loaded with the first document read, not at start-up.
 */
import { lazyImport } from '../kernel/index.js';

const linkedom = lazyImport(() => import('linkedom'));

export interface InsiderTransaction {
  insider_name: string;
  /** Director, Officer (title), 10% Owner, Other — joined with ", ". */
  relationship: string;
  security_title: string;
  transaction_date: string;
  transaction_code: string;
  transaction_type: string;
  /** A (acquired) or D (disposed). */
  acquired_disposed: string;
  shares: number | null;
  price_per_share: number | null;
  /** shares * price, when both are given. */
  value: number | null;
  shares_owned_after: number | null;
  /** D (direct) or I (indirect). */
  ownership: string;
}

/** Form 4 transaction codes (General Instruction 8). */
const CODES: Readonly<Record<string, string>> = {
  P: 'Open market or private purchase',
  S: 'Open market or private sale',
  A: 'Grant or award',
  D: 'Disposition to the issuer',
  F: 'Payment of exercise price or tax by delivering securities',
  I: 'Discretionary transaction',
  M: 'Exercise or conversion of a derivative security',
  C: 'Conversion of a derivative security',
  E: 'Expiration of a short derivative position',
  H: 'Expiration or cancellation of a long derivative position',
  O: 'Exercise of an out-of-the-money derivative security',
  X: 'Exercise of an in-the-money or at-the-money derivative security',
  G: 'Gift',
  L: 'Small acquisition',
  W: 'Acquisition or disposition by will or the laws of descent',
  Z: 'Deposit into or withdrawal from a voting trust',
  J: 'Other acquisition or disposition',
  K: 'Equity swap or similar instrument',
  U: 'Disposition in a change of control tender',
};

type El = { querySelector(s: string): El | null; querySelectorAll(s: string): ArrayLike<El>; textContent: string | null };

const text = (el: El | null, sel: string) => el?.querySelector(sel)?.textContent?.trim() ?? '';
const flag = (el: El | null, sel: string) => ['1', 'true'].includes(text(el, sel).toLowerCase());
function number(el: El | null, sel: string): number | null {
  const s = text(el, sel).replace(/,/g, '');
  if (!s) return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

function relationshipOf(owner: El): string {
  const rel = owner.querySelector('reportingOwnerRelationship');
  const parts: string[] = [];
  if (flag(rel, 'isDirector')) parts.push('Director');
  if (flag(rel, 'isOfficer')) parts.push(text(rel, 'officerTitle') ? `Officer (${text(rel, 'officerTitle')})` : 'Officer');
  if (flag(rel, 'isTenPercentOwner')) parts.push('10% Owner');
  if (flag(rel, 'isOther')) parts.push(text(rel, 'otherText') ? `Other (${text(rel, 'otherText')})` : 'Other');
  return parts.join(', ');
}

/** The non-derivative transactions of a Form 4; undefined when the text is no ownership document. */
export async function parseForm4(xml: string): Promise<InsiderTransaction[] | undefined> {
  const { DOMParser } = await linkedom();
  const doc = new DOMParser().parseFromString(xml, 'text/xml') as unknown as El;
  if (!doc.querySelector('ownershipDocument')) return undefined;
  const owners = Array.from(doc.querySelectorAll('reportingOwner'));
  const insider = owners
    .map((o) => text(o, 'reportingOwnerId rptOwnerName'))
    .filter(Boolean)
    .join('; ');
  const relationship = [...new Set(owners.map(relationshipOf).filter(Boolean))].join('; ');
  return Array.from(doc.querySelectorAll('nonDerivativeTable nonDerivativeTransaction')).map((t) => {
    const code = text(t, 'transactionCoding transactionCode').toUpperCase();
    const shares = number(t, 'transactionAmounts transactionShares value');
    const price = number(t, 'transactionAmounts transactionPricePerShare value');
    return {
      insider_name: insider,
      relationship,
      security_title: text(t, 'securityTitle value'),
      transaction_date: text(t, 'transactionDate value').slice(0, 10),
      transaction_code: code,
      transaction_type: CODES[code] ?? (code ? `Code ${code}` : ''),
      acquired_disposed: text(t, 'transactionAmounts transactionAcquiredDisposedCode value').toUpperCase(),
      shares,
      price_per_share: price,
      value: shares !== null && price !== null ? Math.round(shares * price * 100) / 100 : null,
      shares_owned_after: number(t, 'postTransactionAmounts sharesOwnedFollowingTransaction value'),
      ownership: text(t, 'ownershipNature directOrIndirectOwnership value').toUpperCase(),
    };
  });
}
