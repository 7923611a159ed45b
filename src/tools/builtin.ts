/**
 * The built-in tools, configured from the parsed settings (config's `tools`), ready to register.
 * The web tools share one guarded HTTP client, so they share its per-host limits.
 */
import type { BlobStore } from '../bus/index.js';
import type { Workspace } from '../workspace/index.js';
import type { AdsVendorSettings } from './ads-client.js';
import { adsTools } from './ads-tools.js';
import { bashTool } from './bash.js';
import { BrowserPool, type BrowserSettings } from './browser.js';
import { browserScreenshotTool } from './browser-screenshot.js';
import { calculatorTool } from './calculator.js';
import { fileTools } from './files.js';
import { financeTools, type FinanceVendorSettings } from './finance-tools.js';
import { lpBatchAnalyzeTool } from './lp-batch-analyze.js';
import { lpVisualAnalyzeTool } from './lp-visual-analyze.js';
import { createSafeFetch } from './net.js';
import { organicSearchTool } from './organic-search.js';
import { pythonExecutorTool } from './python.js';
import type { Tool, ToolModel } from './tool.js';
import { webCrawlTool, webFetchTool, webSubpageFetchTool } from './web-fetch.js';
import { webSearchTool, type WebSearchSettings } from './web-search.js';

export interface BuiltinToolSettings {
  webSearch: WebSearchSettings;
  /** TOOLS_HTTP_ALLOW_HOSTS: hosts or CIDRs the web tools' SSRF guard lets through. */
  httpAllowHosts: string;
  python: { timeoutMs: number; memoryMb: number };
  bash: { enabled: boolean; timeoutMs: number };
  /** The ads-research agents' vendors (SERPAPI_*, META_AD_LIBRARY_*, ADS_*). */
  adsVendors: AdsVendorSettings;
  /** The financial agents' vendors (SEC_EDGAR_*, XAI_*, ALPACA_*). */
  finance: FinanceVendorSettings;
  /** The headless browser of the screenshot and landing-page tools (BROWSER_*). */
  browser: BrowserSettings;
}

export interface BuiltinToolDeps {
  workspace: Workspace;
  /** The service's model, for tools that analyse what they fetched (catalogue agents). */
  model: ToolModel;
  /** Where screenshots over 500 KB are kept (the BLOBS object store). */
  blobs?: BlobStore;
}

/** Every built-in tool, ready to register. */
export function builtinTools(s: BuiltinToolSettings, deps: BuiltinToolDeps): Tool[] {
  const fetch = createSafeFetch({
    allowHosts: s.httpAllowHosts ? [s.httpAllowHosts] : [],
    maxBytes: 5 * 1024 * 1024,
    timeoutMs: 20_000,
    perHostConcurrency: 2,
  });
  // One browser process for the three browser tools, launched on first use, closed with the registry.
  const browser = { pool: new BrowserPool(s.browser, s.httpAllowHosts), allowHosts: s.httpAllowHosts, blobs: deps.blobs };
  return [
    calculatorTool(),
    pythonExecutorTool(s.python),
    webSearchTool(s.webSearch),
    webFetchTool({ fetch }),
    webSubpageFetchTool({ fetch }),
    webCrawlTool({ fetch }),
    ...fileTools(deps.workspace),
    bashTool({ enabled: s.bash.enabled, workspace: deps.workspace, timeoutMs: s.bash.timeoutMs, maxOutputBytes: 64 * 1024 }),
    ...adsTools(s.adsVendors, deps.model),
    browserScreenshotTool(browser),
    lpVisualAnalyzeTool({ ...browser, model: deps.model }),
    lpBatchAnalyzeTool({ ...browser, model: deps.model }),
    ...financeTools(s.finance, deps.model),
    organicSearchTool(s.adsVendors),
  ] as Tool[];
}
