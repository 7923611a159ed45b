/**
 * `lp_batch_analyze` (catalogue agent `lp-batch-analyze`): up to 10 landing pages (the spec's
 * limit) analysed like `lp_visual_analyze`, in parallel as far as the browser's page limit
 * allows. One page failing does not fail the batch: each URL has its own result, and the
 * output counts successes and failures and totals the cost. The pages' screenshots share one
 * output's inline budget (./browser-capture.ts): past it they are blob references.
 */
import { randomUUID } from 'node:crypto';
import { DEVICES, type Device } from './browser.js';
import { InlineBudget } from './browser-capture.js';
import { analyzeLandingPage, checkUrlCount, type LpCost, type LpDeps } from './lp-analyze.js';
import { ToolError, type Tool, type ToolOutput } from './tool.js';

/** URLs in one batch at most (spec). */
export const LP_BATCH_MAX_URLS = 10;

export type LpBatchAnalyzeArgs = {
  urls: string[];
  language?: string;
  full_page?: boolean;
  device?: Device;
  analysis_prompt?: string;
  include_markdown?: boolean;
};

export function lpBatchAnalyzeTool(deps: LpDeps): Tool<LpBatchAnalyzeArgs> & { close(): Promise<void> } {
  return {
    name: 'lp_batch_analyze',
    description: `Analyse up to ${LP_BATCH_MAX_URLS} landing pages at once (headless browser screenshot and model analysis of each page's text and structure); one result per URL with success and failure counts and the total cost.`,
    category: 'web',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        urls: {
          type: 'array',
          description: `Landing pages (http or https), at most ${LP_BATCH_MAX_URLS}`,
          items: { type: 'string', minLength: 1, maxLength: 4096 },
          minItems: 1,
          maxItems: LP_BATCH_MAX_URLS,
        },
        language: { type: 'string', description: 'Language of the pages and the analyses', default: 'en', maxLength: 16 },
        full_page: { type: 'boolean', description: 'Screenshots of whole pages instead of the first viewport', default: false },
        device: { type: 'string', enum: [...DEVICES], description: 'Viewport', default: 'desktop' },
        analysis_prompt: { type: 'string', description: 'What the analyses should focus on', maxLength: 4000 },
        include_markdown: { type: 'boolean', description: "Return each page's content as markdown", default: false },
      },
      required: ['urls'],
      additionalProperties: false,
    },
    timeoutMs: 300_000,
    // An estimate for listings (one model call per page, 10 pages); each call reports its real cost.
    costPerUse: 0.1,
    dangerous: false,
    // Not offered to models where no browser is installed (a direct call says what to install).
    get available() {
      return deps.pool.installed();
    },
    retryable: true,
    async run(a, ctx): Promise<ToolOutput> {
      checkUrlCount(a.urls.length, LP_BATCH_MAX_URLS);
      // One output for all pages: their inline screenshots share one budget (the rest become blob references).
      const inlineBudget = new InlineBudget();
      const results = await Promise.all(
        a.urls.map(async (url) => {
          try {
            const r = await analyzeLandingPage(
              deps,
              {
                url,
                language: a.language ?? 'en',
                fullPage: a.full_page ?? false,
                analysisPrompt: a.analysis_prompt,
                includeMarkdown: a.include_markdown ?? false,
                captureMode: 'full_page',
                device: a.device ?? 'desktop',
                maxSections: 0,
                timeoutMs: 30_000,
                inlineBudget,
              },
              ctx,
            );
            return { url, success: true, ...r.output };
          } catch (err) {
            if (ctx.signal.aborted) throw ctx.signal.reason;
            return { url, success: false, error: err instanceof ToolError ? err.message : `browser: ${(err as Error).message.split('\n')[0]}` };
          }
        }),
      );
      const cost: LpCost = { vision: 0, scrape: 0, ocr: 0, total: 0 };
      for (const r of results) {
        const c = (r as { vision_analysis?: { cost_usd?: LpCost } }).vision_analysis?.cost_usd;
        if (!c) continue;
        cost.vision += c.vision;
        cost.scrape += c.scrape;
        cost.ocr += c.ocr;
        cost.total += c.total;
      }
      const successful = results.filter((r) => r.success).length;
      const output = {
        batch_id: randomUUID(),
        total_urls: a.urls.length,
        successful,
        failed: results.length - successful,
        results,
        cost_usd: cost,
        timestamp: new Date().toISOString(),
      };
      const lines = results.map((r) =>
        r.success
          ? `- ${r.url}: analysed ("${String((r as { title?: string }).title ?? '')}")`
          : `- ${r.url}: failed: ${String((r as { error?: string }).error)}`,
      );
      return { output, text: `Analysed ${successful} of ${a.urls.length} landing pages.\n${lines.join('\n')}`, costUsd: cost.total };
    },
    close: () => deps.pool.close(),
  };
}
