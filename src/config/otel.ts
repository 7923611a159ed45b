/**
 * The OpenTelemetry settings, from the standard OTEL_* variables: where traces are exported
 * (OTLP over HTTP), with which headers, and under which service name. No endpoint: nothing is
 * exported.
 */
import { ConfigError } from './errors.js';
import { optStr, str, type Env } from './env.js';

export interface OtelConfig {
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; unset: no export. */
  tracesEndpoint?: string;
  /** OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS over it (`key=value,...`, values URL-encoded). */
  headers: Record<string, string>;
  /** OTEL_SERVICE_NAME (default taskorch). */
  serviceName: string;
}

function url(env: Env, name: string): string | undefined {
  const v = optStr(env, name)?.trim();
  if (v === undefined) return undefined;
  if (!URL.canParse(v) || !/^https?:$/.test(new URL(v).protocol)) throw new ConfigError(name, `expected an http(s) URL, got ${JSON.stringify(v)}`);
  return v;
}

function headers(env: Env, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (optStr(env, name) ?? '').split(',')) {
    if (!pair.trim()) continue;
    const at = pair.indexOf('=');
    const key = at > 0 ? pair.slice(0, at).trim() : '';
    if (!key) throw new ConfigError(name, `expected key=value pairs separated by commas, got ${JSON.stringify(pair.trim())}`);
    try {
      out[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new ConfigError(name, `the value of ${key} is not URL-encoded`);
    }
  }
  return out;
}

export function otelConfig(env: Env): OtelConfig {
  const traces = url(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  return {
    tracesEndpoint: traces ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined),
    headers: { ...headers(env, 'OTEL_EXPORTER_OTLP_HEADERS'), ...headers(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') },
    serviceName: str(env, 'OTEL_SERVICE_NAME', 'taskorch').trim(),
  };
}
