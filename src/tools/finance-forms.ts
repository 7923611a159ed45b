/**
 * What the filings agent knows of SEC form types, as data: which forms report material events,
 * how a requested form matches EDGAR's form names, and the plain-language names of forms and of
 * 8-K items (https://www.sec.gov/files/form8-k.pdf) that make a filing's description.
 */

/**
 * Forms whose filing is itself a material event: the 8-K current report (filed within four
 * business days of an event the SEC lists as material) and the Schedule 13D beneficial-ownership
 * report (someone acquired over 5% with intent to influence). Periodic reports (10-K, 10-Q),
 * insider trades (4), proxies and registrations are not. Amendments count as their form.
 */
const MATERIAL_FORMS = new Set(['8-K', 'SC 13D']);

/** EDGAR's 2024 names of the 13D/13G schedules ("SCHEDULE 13D") and the older ones ("SC 13D") are the same form. */
export function canonicalForm(form: string): string {
  return form
    .trim()
    .toUpperCase()
    .replace(/\s+/g, ' ')
    .replace(/^SCHEDULE 13/, 'SC 13');
}

/** The form without its amendment suffix: `8-K/A` -> `8-K`. */
const baseForm = (form: string) => canonicalForm(form).replace(/\/A$/, '');

export function isMaterialForm(form: string): boolean {
  return MATERIAL_FORMS.has(baseForm(form));
}

/** Whether a filing of `form` is one of the `requested` forms (a requested form includes its amendments). */
export function formRequested(form: string, requested: ReadonlySet<string>): boolean {
  const f = canonicalForm(form);
  return requested.has(f) || requested.has(baseForm(f));
}

const FORM_NAMES: Readonly<Record<string, string>> = {
  '8-K': 'Current report',
  '10-K': 'Annual report',
  '10-Q': 'Quarterly report',
  '4': 'Statement of changes in beneficial ownership (insider transaction)',
  '3': 'Initial statement of beneficial ownership',
  '5': 'Annual statement of changes in beneficial ownership',
  'SC 13D': 'Beneficial ownership report (over 5%, active investor)',
  'SC 13G': 'Beneficial ownership report (over 5%, passive investor)',
  'DEF 14A': 'Definitive proxy statement',
  'S-1': 'Registration statement',
  '6-K': 'Report of a foreign private issuer',
  '20-F': 'Annual report of a foreign private issuer',
};

const ITEMS_8K: Readonly<Record<string, string>> = {
  '1.01': 'Entry into a Material Definitive Agreement',
  '1.02': 'Termination of a Material Definitive Agreement',
  '1.03': 'Bankruptcy or Receivership',
  '1.04': 'Mine Safety',
  '1.05': 'Material Cybersecurity Incidents',
  '2.01': 'Completion of Acquisition or Disposition of Assets',
  '2.02': 'Results of Operations and Financial Condition',
  '2.03': 'Creation of a Direct Financial Obligation',
  '2.04': 'Triggering Events That Accelerate or Increase a Direct Financial Obligation',
  '2.05': 'Costs Associated with Exit or Disposal Activities',
  '2.06': 'Material Impairments',
  '3.01': 'Notice of Delisting or Failure to Satisfy a Continued Listing Rule',
  '3.02': 'Unregistered Sales of Equity Securities',
  '3.03': 'Material Modification to Rights of Security Holders',
  '4.01': "Changes in Registrant's Certifying Accountant",
  '4.02': 'Non-Reliance on Previously Issued Financial Statements',
  '5.01': 'Changes in Control of Registrant',
  '5.02': 'Departure or Election of Directors or Officers; Compensatory Arrangements',
  '5.03': 'Amendments to Articles of Incorporation or Bylaws',
  '5.07': 'Submission of Matters to a Vote of Security Holders',
  '7.01': 'Regulation FD Disclosure',
  '8.01': 'Other Events',
  '9.01': 'Financial Statements and Exhibits',
};

/**
 * A filing's description: the form's name (EDGAR's own description of the document when the
 * form is not one listed here), and for an 8-K the names of its items.
 */
export function filingDescription(form: string, primaryDocDescription: string, items: string): string {
  const base = baseForm(form);
  const amended = canonicalForm(form).endsWith('/A') ? ' (amendment)' : '';
  const name = FORM_NAMES[base] ?? (primaryDocDescription.trim() || canonicalForm(form));
  const itemNames = items
    .split(',')
    .map((i) => i.trim())
    .filter(Boolean)
    .map((i) => (ITEMS_8K[i] ? `Item ${i} ${ITEMS_8K[i]}` : `Item ${i}`));
  return itemNames.length ? `${name}${amended}: ${itemNames.join('; ')}` : `${name}${amended}`;
}
