/**
 * The built-in tools, configured from the parsed settings (config's `tools`), ready to register.
 * The web tools share one guarded HTTP client, so they share its per-host limits.
 */
import type { Workspace } from '../workspace/index.js';
import { bashTool } from './bash.js';
import { calculatorTool } from './calculator.js';
import { fileTools } from './files.js';
import { createSafeFetch } from './net.js';
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
}

export interface BuiltinToolDeps {
  workspace: Workspace;
  /** The service's model, for tools that analyse what they fetched (catalogue agents). */
  model: ToolModel;
}

/** Every built-in tool, ready to register. */
export function builtinTools(s: BuiltinToolSettings, deps: BuiltinToolDeps): Tool[] {
  const fetch = createSafeFetch({
    allowHosts: s.httpAllowHosts ? [s.httpAllowHosts] : [],
    maxBytes: 5 * 1024 * 1024,
    timeoutMs: 20_000,
    perHostConcurrency: 2,
  });
  return [
    calculatorTool(),
    pythonExecutorTool(s.python),
    webSearchTool(s.webSearch),
    webFetchTool({ fetch }),
    webSubpageFetchTool({ fetch }),
    webCrawlTool({ fetch }),
    ...fileTools(deps.workspace),
    bashTool({ enabled: s.bash.enabled, workspace: deps.workspace, timeoutMs: s.bash.timeoutMs, maxOutputBytes: 64 * 1024 }),
  ] as Tool[];
}
