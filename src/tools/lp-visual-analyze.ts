/**
 * `lp_visual_analyze` (catalogue agent `lp-visual-analyze`): one landing page rendered by the
 * headless browser and analysed by the service's model (see ./lp-analyze.ts for what is
 * analysed, why OCR is reported as not performed and enable_ocr: true is refused).
 */
import { DEVICES, type Device } from './browser.js';
import { analyzeLandingPage, lpSummary, type LpDeps } from './lp-analyze.js';
import type { Tool, ToolOutput } from './tool.js';

export type LpVisualAnalyzeArgs = {
  url: string;
  language?: string;
  full_page?: boolean;
  analysis_prompt?: string;
  include_markdown?: boolean;
  enable_ocr?: boolean;
  capture_mode?: 'full_page' | 'sections';
  device?: Device;
  max_sections?: number;
};

export function lpVisualAnalyzeTool(deps: LpDeps): Tool<LpVisualAnalyzeArgs> & { close(): Promise<void> } {
  return {
    name: 'lp_visual_analyze',
    description:
      "Render a landing page in a headless browser (screenshot of the full page or of each section) and analyse its headline, value proposition, calls to action, sections and trust signals with the service's model, from the page's rendered text and structure.",
    category: 'web',
    version: '1.0.0',
    parameters: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'The landing page (http or https)', minLength: 1, maxLength: 4096 },
        language: {
          type: 'string',
          description: 'Language of the page and the analysis (for ja, zh, ko the output says OCR was not performed: no OCR engine is installed)',
          default: 'en',
          maxLength: 16,
        },
        full_page: { type: 'boolean', description: 'Screenshot of the whole page instead of the first viewport', default: true },
        analysis_prompt: { type: 'string', description: 'What the analysis should focus on', maxLength: 4000 },
        include_markdown: { type: 'boolean', description: "Return the page's content as markdown", default: true },
        enable_ocr: {
          type: 'boolean',
          description:
            'OCR of text inside images: no OCR engine is installed, so true is refused (bad_arguments); unset or false: the page text (DOM) is analysed',
        },
        capture_mode: { type: 'string', enum: ['full_page', 'sections'], description: 'One screenshot, or one per page section', default: 'full_page' },
        device: { type: 'string', enum: [...DEVICES], description: 'Viewport: desktop 1280x800, tablet 820x1180, mobile 390x844', default: 'desktop' },
        max_sections: { type: 'integer', description: 'Sections captured at most (capture_mode sections)', minimum: 1, maximum: 20, default: 8 },
      },
      required: ['url'],
      additionalProperties: false,
    },
    timeoutMs: 180_000,
    // An estimate for listings (one model call per page); each call reports its real cost (the model's price).
    costPerUse: 0.01,
    dangerous: false,
    // Not offered to models where no browser is installed (a direct call says what to install).
    get available() {
      return deps.pool.installed();
    },
    retryable: true,
    async run(a, ctx): Promise<ToolOutput> {
      const { output, costUsd } = await analyzeLandingPage(
        deps,
        {
          url: a.url,
          language: a.language ?? 'en',
          fullPage: a.full_page ?? true,
          analysisPrompt: a.analysis_prompt,
          includeMarkdown: a.include_markdown ?? true,
          enableOcr: a.enable_ocr,
          captureMode: a.capture_mode ?? 'full_page',
          device: a.device ?? 'desktop',
          maxSections: a.max_sections ?? 8,
          timeoutMs: 30_000,
        },
        ctx,
      );
      return { output, text: lpSummary(output), costUsd };
    },
    close: () => deps.pool.close(),
  };
}
