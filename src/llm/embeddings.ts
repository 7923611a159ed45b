/**
 * Embeddings endpoints, which the response cache uses to compare requests when the catalogue
 * names an embedding model for the provider that serves them.
 */
import type OpenAI from 'openai';

/** An embeddings endpoint: one vector per text, in order. */
export interface Embedder {
  /** Provider and model ("openai/text-embedding-3-small"): vectors of different ids are not comparable. */
  readonly id: string;
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

/** An OpenAI-compatible /embeddings endpoint. */
export function openAiEmbedder(o: { provider: string; baseUrl: string; apiKey?: string; model: string; timeoutMs: number }): Embedder {
  // The SDK loads at the first request (a process that never embeds does not hold it).
  let client: OpenAI | undefined;
  return {
    id: `${o.provider}/${o.model}`,
    async embed(texts, signal) {
      client ??= new (await import('openai')).default({ baseURL: o.baseUrl, apiKey: o.apiKey ?? 'not-set', timeout: o.timeoutMs, maxRetries: 1 });
      // float: servers such as Ollama do not implement the SDK's default base64 encoding.
      const r = await client.embeddings.create({ model: o.model, input: texts, encoding_format: 'float' }, { signal });
      const out: number[][] = new Array(texts.length);
      for (const d of r.data) out[d.index] = d.embedding;
      for (let i = 0; i < texts.length; i++) if (!Array.isArray(out[i])) throw new Error(`embeddings endpoint returned no vector for input ${i}`);
      return out;
    },
  };
}
