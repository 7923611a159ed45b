/**
 * Landing-page analysis, shared by `lp_visual_analyze` and `lp_batch_analyze`: the page is
 * rendered by the headless browser (screenshot, optionally per section) and analysed by the
 * service's model.
 *
 * The service's model reads text only, so "vision_analysis" is an analysis of what the page
 * renders as text and structure (title, meta description, headings, calls to action, forms,
 * images and their alt text, each section's heading and text, the page as markdown), never of
 * its pixels; the output says so (`vision_analysis.analysed`). OCR: this service has no OCR
 * engine; an explicit enable_ocr: true is refused (bad_arguments) before the browser runs; left
 * unset with language ja/zh/ko (the spec's auto), the output says OCR was not performed and why,
 * and the text comes from the page's DOM instead.
 */
import type { BlobStore } from '../bus/index.js';
import { lazyImport } from '../kernel/index.js';
import { capturePage, InlineBudget, screenshotRef, screenshotUrl, type ScreenshotRef } from './browser-capture.js';
import type { BrowserPool, Device } from './browser.js';
import { ToolError, type ToolContext, type ToolModel } from './tool.js';
import { htmlToMarkdown } from './web-fetch.js';

export interface LpDeps {
  pool: BrowserPool;
  allowHosts: string;
  blobs?: BlobStore;
  model: ToolModel;
}

export interface LpRequest {
  url: string;
  language: string;
  fullPage: boolean;
  analysisPrompt?: string;
  includeMarkdown: boolean;
  /** undefined: auto (asked for ja, zh, ko, and reported as not performed); true is refused (no OCR engine). */
  enableOcr?: boolean;
  captureMode: 'full_page' | 'sections';
  device: Device;
  maxSections: number;
  timeoutMs: number;
  /** The output's inline screenshot bytes (a batch shares one across its pages); unset: a budget of its own. */
  inlineBudget?: InlineBudget;
}

export interface LpCost {
  vision: number;
  scrape: number;
  ocr: number;
  total: number;
}

/** Languages whose pages the spec analyses with OCR when enable_ocr is left on auto. */
const OCR_LANGUAGES = new Set(['ja', 'zh', 'ko']);
/** Markdown characters the model reads at most. */
const PROMPT_MARKDOWN_CHARS = 12_000;
/** Markdown characters returned at most (include_markdown). */
const OUTPUT_MARKDOWN_CHARS = 50_000;

/** Text and structure of a rendered page (what the text-only model reads). */
export interface PageStructure {
  meta_description: string;
  headings: Array<{ level: number; text: string }>;
  calls_to_action: string[];
  forms: number;
  images: number;
  images_without_alt: number;
}

/** The DOM the page's structure is read with: loaded with the first page analysed, not at start-up. */
const linkedom = lazyImport(() => import('linkedom'));

const squash = (s: string | null | undefined, max = 200) => (s ?? '').replace(/\s+/g, ' ').trim().slice(0, max);

export async function pageStructure(html: string): Promise<PageStructure> {
  const { parseHTML } = await linkedom();
  const { document } = parseHTML(html) as any;
  const headings = Array.from(document.querySelectorAll('h1, h2, h3'))
    .map((h: any) => ({ level: Number(h.tagName.slice(1)), text: squash(h.textContent) }))
    .filter((h: { text: string }) => h.text)
    .slice(0, 40);
  const ctaEls: any[] = Array.from(
    document.querySelectorAll('button, input[type="submit"], a[role="button"], a[class*="btn"], a[class*="button"], a[class*="cta"]'),
  );
  const ctas = [...new Set(ctaEls.map((e: any) => squash(e.textContent || e.getAttribute('value') || e.getAttribute('aria-label'), 80)).filter(Boolean))].slice(
    0,
    20,
  );
  const images: any[] = Array.from(document.querySelectorAll('img'));
  return {
    meta_description: squash(document.querySelector('meta[name="description"]')?.getAttribute('content'), 500),
    headings,
    calls_to_action: ctas,
    forms: document.querySelectorAll('form').length,
    images: images.length,
    images_without_alt: images.filter((i) => !squash(i.getAttribute('alt'))).length,
  };
}

/** The first JSON object in a model's answer (fenced or not), or undefined. */
function jsonObjectIn(text: string): Record<string, unknown> | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const v = JSON.parse(text.slice(start, end + 1));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const SYSTEM = [
  'You analyse landing pages for marketers. You are given what a browser rendered as text and structure (not the image).',
  'Answer with one JSON object and nothing else, with the keys: headline, value_proposition, calls_to_action (array),',
  'target_audience, sections (array of {name, purpose}), trust_signals (array), strengths (array), weaknesses (array),',
  'recommendations (array). Base every statement on the page content given.',
].join(' ');

export async function analyzeLandingPage(deps: LpDeps, r: LpRequest, ctx: ToolContext): Promise<{ output: Record<string, unknown>; costUsd: number }> {
  if (r.enableOcr === true) {
    throw new ToolError(
      'enable_ocr: true cannot be honoured: no OCR engine is installed in this service (text drawn inside images cannot be read); leave enable_ocr unset or false, the analysis reads the page text (its DOM)',
      'bad_arguments',
    );
  }
  const c = await capturePage(
    deps.pool,
    deps.allowHosts,
    {
      url: r.url,
      device: r.device,
      fullPage: r.fullPage,
      waitUntil: 'load',
      timeoutMs: r.timeoutMs,
      html: true,
      sections: r.captureMode === 'sections' ? r.maxSections : 0,
    },
    ctx.signal,
  );
  const owner = { userId: ctx.userId, tenantId: ctx.tenantId };
  const budget = r.inlineBudget ?? new InlineBudget();
  // Twice: an inline screenshot is also screenshot_url (a data: URL).
  const screenshot = await screenshotRef(c.png, deps.blobs, owner, budget, 2);
  const { markdown } = await htmlToMarkdown(c.html ?? '', c.finalUrl);
  const structure = await pageStructure(c.html ?? '');
  const sections: Array<Record<string, unknown>> = [];
  for (const s of c.sections ?? []) {
    const shot: ScreenshotRef = await screenshotRef(s.png, deps.blobs, owner, budget);
    sections.push({ index: s.index, tag: s.tag, heading: s.heading, top: s.top, height: s.height, screenshot: shot });
  }

  const ocrRequested = r.enableOcr === undefined && OCR_LANGUAGES.has(r.language);
  const ocr = {
    requested: ocrRequested,
    performed: false,
    reason: ocrRequested
      ? 'no OCR engine is available in this service: text drawn inside images was not read; the analysis used the text of the page itself (its DOM)'
      : 'not requested',
  };

  const prompt = [
    `Landing page: ${c.finalUrl} (${r.device}, HTTP ${c.status})`,
    `Title: ${c.title || '(none)'}`,
    `Answer in language: ${r.language}`,
    r.analysisPrompt ? `What to focus on: ${r.analysisPrompt}` : '',
    `Structure: ${JSON.stringify(structure)}`,
    sections.length
      ? `Sections (top to bottom): ${JSON.stringify(sections.map((s) => ({ tag: s.tag, heading: s.heading, top: s.top, height: s.height })))}`
      : '',
    `Page content (markdown${markdown.length > PROMPT_MARKDOWN_CHARS ? ', cut' : ''}):\n${markdown.slice(0, PROMPT_MARKDOWN_CHARS)}`,
  ]
    .filter(Boolean)
    .join('\n\n');

  let vision: Record<string, unknown>;
  let visionCost = 0;
  try {
    const m = await deps.model({ system: SYSTEM, prompt, maxTokens: 1500, signal: ctx.signal });
    visionCost = m.costUsd ?? 0;
    const parsed = jsonObjectIn(m.text);
    vision = {
      success: true,
      structured: parsed ?? { analysis: m.text },
      format: parsed ? 'json' : 'text',
      model: m.model,
      provider: m.provider,
      tokens: m.tokens,
    };
  } catch (err) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    vision = { success: false, structured: null, error: `model call failed: ${(err as Error).message}` };
  }
  const cost: LpCost = { vision: visionCost, scrape: 0, ocr: 0, total: visionCost };
  vision.analysed = 'page text and structure (the service model reads text, not images)';
  vision.cost_usd = cost;

  const output: Record<string, unknown> = {
    url: c.url,
    final_url: c.finalUrl,
    status: c.status,
    title: c.title,
    screenshot_url: screenshotUrl(screenshot),
    screenshot,
    width: c.width,
    height: c.height,
    device: r.device,
    language: r.language,
    capture_mode: r.captureMode,
    page_structure: structure,
    vision_analysis: vision,
    ocr,
    timestamp: new Date().toISOString(),
  };
  if (r.captureMode === 'sections') output.sections = sections;
  if (r.includeMarkdown) {
    output.markdown = markdown.slice(0, OUTPUT_MARKDOWN_CHARS);
    output.markdown_truncated = markdown.length > OUTPUT_MARKDOWN_CHARS;
  }
  return { output, costUsd: cost.total };
}

/** A one-paragraph summary of an analysis for the model reading the tool's text. */
export function lpSummary(o: Record<string, unknown>): string {
  const v = o.vision_analysis as { success: boolean; structured: unknown; error?: string };
  const body = v.success ? JSON.stringify(v.structured) : `analysis failed: ${v.error}`;
  return `Landing page ${String(o.final_url)} ("${String(o.title)}"), screenshot ${String((o.screenshot as { size_bytes: number }).size_bytes)} bytes.\n${body}`;
}

export const checkUrlCount = (n: number, max: number) => {
  if (n === 0) throw new ToolError('urls must hold at least one URL', 'bad_arguments');
  if (n > max) throw new ToolError(`urls holds ${n} URLs; at most ${max} are analysed in one batch`, 'bad_arguments');
};
