/**
 * The internal model service (LLM_SERVICE_PORT, default 8000): `GET /providers/models`
 * (optional `?tier=small|medium|large`) and `GET /health`, on node:http. No authentication:
 * it is internal (bind it to a private address). The answer is the catalogue as routing sees
 * it: an object keyed by provider name, each value the provider's model entries, `[]` for a
 * provider whose key is not configured.
 */
import http from 'node:http';
import { TIERS, isTier, type Logger, type Tier } from '../kernel/index.js';
import type { Catalogue, ModelEntry } from './catalogue.js';
import { buildRouting, type LlmSettings, type Routing } from './routing.js';

/** A provider model entry of the spec. */
/** A catalogue entry as the model service lists it. */
export interface ProviderModelEntry extends ModelEntry {
  /** Same as id. */
  name: string;
  /** The provider can be called now: its key is set (or it needs none) and LLM_PROVIDER=offline does not exclude it. */
  available: boolean;
}

/** The body of GET /providers/models: every provider of the catalogue, optionally one tier's models only. */
export function listProviderModels(routing: Routing, tier?: Tier): Record<string, ProviderModelEntry[]> {
  const out: Record<string, ProviderModelEntry[]> = {};
  for (const p of Object.values(routing.providers)) {
    if (!p.configured) {
      out[p.name] = [];
      continue;
    }
    const available = !routing.offlineOnly || p.offline;
    out[p.name] = p.models
      .filter((m) => !tier || m.tier === tier)
      .map((m) => ({
        id: m.id,
        name: m.id,
        tier: m.tier,
        context_window: m.context_window,
        cost_per_1k_prompt_tokens: m.cost_per_1k_prompt_tokens,
        cost_per_1k_completion_tokens: m.cost_per_1k_completion_tokens,
        supports_tools: m.supports_tools,
        supports_streaming: m.supports_streaming,
        available,
      }));
  }
  return out;
}

export interface ModelServiceOptions {
  /** Default 127.0.0.1 (the service is unauthenticated). */
  host?: string;
  /** 0: any free port (tests). */
  port: number;
  catalogue: Catalogue;
  /** The `llm` slice of the configuration (keys, the one-provider shortcut, LLM_MODEL). */
  settings: LlmSettings;
  log?: Logger;
  /** What `GET /metrics` answers (tier shares of the model calls, ...). */
  metrics?: () => Promise<Record<string, unknown>>;
}

export interface ModelService {
  /** The port listened on (the one chosen when 0 was asked). */
  port: number;
  close(): Promise<void>;
}

export async function startModelService(opts: ModelServiceOptions): Promise<ModelService> {
  // The catalogue and keys are read once: a change needs a restart (spec).
  const routing = buildRouting(opts.catalogue, opts.settings);
  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      const data = JSON.stringify(body);
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data), 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : data);
    };
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://model-service');
    } catch {
      return send(400, { error: 'Bad request' });
    }
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (path !== '/providers/models' && path !== '/health' && !(path === '/metrics' && opts.metrics))
      return send(404, { error: `Not found: ${req.method} ${url.pathname}` });
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return send(405, { error: 'Method not allowed' });
    }
    if (path === '/health') return send(200, { status: 'healthy', service: 'llm' });
    if (path === '/metrics') {
      opts.metrics!().then(
        (m) => send(200, m),
        (err: unknown) => {
          opts.log?.warn({ err }, 'model service metrics failed');
          send(503, { error: 'metrics unavailable' });
        },
      );
      return;
    }
    const tiers = url.searchParams.getAll('tier');
    const tier = tiers.at(-1)?.trim().toLowerCase();
    if (tier && !isTier(tier)) return send(400, { error: `Invalid tier: ${JSON.stringify(tiers.at(-1))} (expected one of ${TIERS.join(', ')})` });
    send(200, listProviderModels(routing, tier ? (tier as Tier) : undefined));
  });
  server.keepAliveTimeout = 5000;
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  opts.log?.info({ port }, 'model service listening (GET /providers/models)');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
