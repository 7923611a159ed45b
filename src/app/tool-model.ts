/**
 * The model tools call (catalogue agents that analyse what a vendor returned), on the
 * service's provider: its default tier, MAX_TOKENS and TEMPERATURE unless the tool asks for less.
 */
import type { LlmProvider } from '../llm/index.js';
import type { ToolModel } from '../tools/index.js';

export function toolModel(llm: LlmProvider, s: { tier: 'small' | 'medium' | 'large'; maxTokens: number; temperature: number }): ToolModel {
  return async (req) => {
    const r = await llm.complete({
      messages: [...(req.system ? [{ role: 'system' as const, content: req.system }] : []), { role: 'user' as const, content: req.prompt }],
      tier: req.tier ?? s.tier,
      maxTokens: Math.min(req.maxTokens ?? s.maxTokens, s.maxTokens),
      temperature: s.temperature,
      signal: req.signal,
    });
    return { text: r.text, model: r.model, provider: r.provider, tokens: r.usage.totalTokens, costUsd: r.usage.costUsd };
  };
}
