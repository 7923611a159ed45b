/**
 * The ads-research tools of the agent catalogue (serp-ads, portal-jp-ads, social-ad-library,
 * competitor-discover, ads-transparency, ad-creative-analyze, keyword-extract), configured from
 * `tools.adsVendors` and given the service's model for the two that analyse.
 */
import type { AdsVendorSettings } from './ads-client.js';
import { competitorDiscoverTool } from './ads-competitor-discover.js';
import { adCreativeAnalyzeTool } from './ads-creative-analyze.js';
import { keywordExtractTool } from './ads-keyword-extract.js';
import { portalJpAdsTool } from './ads-portal-jp.js';
import { serpAdsTool } from './ads-serp.js';
import { socialAdLibraryTool } from './ads-social-library.js';
import { adsTransparencyTool } from './ads-transparency.js';
import type { Tool, ToolModel } from './tool.js';

export function adsTools(s: AdsVendorSettings, model: ToolModel): Tool[] {
  return [
    serpAdsTool(s),
    portalJpAdsTool(s),
    socialAdLibraryTool(s),
    competitorDiscoverTool(s),
    adsTransparencyTool(s),
    adCreativeAnalyzeTool(model),
    keywordExtractTool(model),
  ] as Tool[];
}
