/**
 * The model analysis of the ads tools that analyse (ad_creative_analyze, keyword_extract): one
 * call to the service's model (ToolModel) asking for a JSON object, read tolerantly (code
 * fences, prose around the object). When the answer holds no usable object (the offline
 * provider's labelled text, a model that ignored the format) the tool says so in its output's
 * `model_analysis` and keeps only what it derives deterministically from its input: it never
 * invents analysis. A model call that fails is the tool's failure (`backend`).
 */
import { type ToolModel, type ToolModelResult, ToolError } from './tool.js';

/** How the output tells what the analysis rests on. */
export interface ModelAnalysis {
  /** True when the model's JSON answer was used. */
  available: boolean;
  model: string;
  provider: string;
  /** Why the model's answer was not used, and what the output holds instead. */
  note?: string;
  /** The start of an answer that was not used (the offline provider's label stays visible). */
  answer_excerpt?: string;
}

export interface JsonAnswer {
  json?: Record<string, unknown>;
  result: ToolModelResult;
}

const EXCERPT_CHARS = 300;

/** The first JSON object in a model's answer: the whole text, a fenced block, or the outermost braces. */
export function parseJsonObject(answer: string): Record<string, unknown> | undefined {
  const candidates: string[] = [answer.trim()];
  for (const m of answer.matchAll(/```(?:json)?\s*([\s\S]*?)```/gi)) candidates.push(m[1]!.trim());
  const open = answer.indexOf('{');
  const close = answer.lastIndexOf('}');
  if (open >= 0 && close > open) candidates.push(answer.slice(open, close + 1));
  for (const c of candidates) {
    try {
      const v = JSON.parse(c) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // next candidate
    }
  }
  return undefined;
}

/** Asks the model for a JSON object; `json` is absent when its answer holds none. */
export async function askForJson(
  model: ToolModel,
  tool: string,
  req: { system: string; prompt: string; maxTokens: number; signal: AbortSignal },
): Promise<JsonAnswer> {
  let result: ToolModelResult;
  try {
    result = await model({ system: req.system, prompt: req.prompt, maxTokens: req.maxTokens, signal: req.signal });
  } catch (err) {
    if (req.signal.aborted) throw req.signal.reason;
    throw new ToolError(`${tool}: the model call failed: ${(err as Error)?.message ?? String(err)}`, 'backend');
  }
  return { json: parseJsonObject(result.text), result };
}

/** The output's account of the analysis: used, or why not (with the answer's start). */
export function analysisOf(a: JsonAnswer, used: boolean, fallback: string): ModelAnalysis {
  const base = { model: a.result.model, provider: a.result.provider };
  if (used) return { available: true, ...base };
  const why = a.json ? 'the model answered JSON without the fields asked for' : 'the model did not answer a JSON object';
  return {
    available: false,
    ...base,
    note: `No model analysis available: ${why}. ${fallback}`,
    answer_excerpt: a.result.text.length > EXCERPT_CHARS ? `${a.result.text.slice(0, EXCERPT_CHARS)}…` : a.result.text,
  };
}

/** A list field of the model's answer: an array kept as is (blank items dropped), one string as a list of one. */
export function listOf(v: unknown): unknown[] | undefined {
  if (typeof v === 'string') return v.trim() ? [v.trim()] : [];
  if (!Array.isArray(v)) return undefined;
  return v.filter((x) => (typeof x === 'string' ? x.trim() !== '' : x !== null && x !== undefined)).map((x) => (typeof x === 'string' ? x.trim() : x));
}

/** Text of arbitrary input bounded for a prompt. */
export function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
