/**
 * The start-up banner: what a person at a terminal needs once the service is up (where to
 * send requests, what runs embedded, how to use a real model). Printed by src/main.ts when
 * logs are pretty (stdout is a TTY, or LOG_FORMAT=pretty); the JSON `ready` line is the
 * machine-readable equivalent.
 */
import { resolve } from 'node:path';
import type { App } from './types.js';
import type { Config } from '../config/index.js';

/** host:port of a connection URL, without credentials. */
function where(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.length > 1 ? u.pathname : ''}`;
  } catch {
    return 'configured URL';
  }
}

export function startupBanner(
  cfg: Config,
  app: Pick<App, 'gatewayPort' | 'grpcPort' | 'natsUrl' | 'natsNote' | 'embeddedNats'>,
  version: string,
  color = false,
): string {
  const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[0m` : s);
  const dim = (s: string) => (color ? `\x1b[2m${s}\x1b[0m` : s);
  const row = (label: string, text: string) => `  ${bold(label.padEnd(13))}${text}`;
  const cont = (text: string) => `  ${' '.repeat(13)}${text}`;
  const dataDir = resolve(cfg.dataDir);
  const roles = cfg.roles.size >= 7 ? 'all roles' : `roles ${[...cfg.roles].join(', ')}`;
  const lines = ['', `${bold(`taskorch ${version}`)} is running (${roles})`];

  if (app.gatewayPort) {
    const host = ['0.0.0.0', '::', '127.0.0.1', '::1'].includes(cfg.gateway.host) ? 'localhost' : cfg.gateway.host;
    const base = `http://${host}:${app.gatewayPort}`;
    lines.push(row('API', `${base}/api/v1/tasks`));
    lines.push(row('OpenAPI', `${base}/openapi.json`));
    lines.push(row('Health', `${base}/health`));
    lines.push(
      row(
        'Auth',
        cfg.gateway.skipAuth
          ? 'off (GATEWAY_SKIP_AUTH; ENVIRONMENT=dev default)'
          : `API key required: POST ${base}/api/v1/auth/register returns one; send it as X-API-Key`,
      ),
    );
  }
  if (app.grpcPort) {
    lines.push(
      row(
        'Internal RPC',
        `${cfg.rpc.host}:${app.grpcPort} (Connect, gRPC, gRPC-Web; token: ${cfg.rpc.token ? 'INTERNAL_RPC_TOKEN' : `${dataDir}/internal-rpc-token`})`,
      ),
    );
  }

  const embedded: string[] = [];
  const external: string[] = [];
  if (app.embeddedNats) embedded.push(`nats-server with JetStream at ${app.natsUrl} (store ${dataDir}/nats)`);
  else external.push(`NATS ${where(app.natsUrl)} (NATS_URL)`);
  if (!cfg.db.url) embedded.push(`PostgreSQL: PGlite (data ${dataDir}/pglite)`);
  else external.push(`PostgreSQL ${where(cfg.db.url)} (DATABASE_URL)`);
  if (cfg.llm.provider === 'offline') embedded.push('offline LLM provider: deterministic placeholder answers, no language model is called');
  else
    external.push(
      `LLM: OpenAI-compatible ${cfg.llm.baseUrl ? where(cfg.llm.baseUrl) : 'api.openai.com'}${cfg.llm.defaultModel ? `, model ${cfg.llm.defaultModel}` : ', models from MODELS_CONFIG_PATH'}`,
    );
  embedded.forEach((t, i) => lines.push(i === 0 ? row('Embedded', t) : cont(t)));
  external.forEach((t, i) => lines.push(i === 0 ? row('Using', t) : cont(t)));
  lines.push(row('Durability', app.natsNote));

  if (cfg.llm.provider === 'offline') {
    lines.push(row('Real model', 'set LLM_BASE_URL (any OpenAI-compatible server), LLM_API_KEY and LLM_MODEL, then restart'));
  }
  if (app.gatewayPort)
    lines.push(
      row('Try', `npx taskorch submit "What is the capital of France?"${app.gatewayPort !== 8080 ? ` --url http://localhost:${app.gatewayPort}` : ''}`),
    );
  lines.push(dim('  Ctrl-C stops the service (running workflows are handed back to the queue).'), '');
  return lines.join('\n') + '\n';
}
