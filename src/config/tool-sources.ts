/**
 * The `toolSources` slice: tools that come from elsewhere (MCP servers, OpenAPI documents).
 * - MCP_CONFIG_PATH (default ./config/mcp.yaml): the operator's MCP servers. An absent default
 *   file means none; a path the operator named must exist. Every server is trusted (not behind
 *   the SSRF guard). `${VAR}` in any string value is taken from the environment, and a variable
 *   that is not set fails start-up naming it, so a missing token is not a silent 401 later.
 * - MCP_TOOL_TIMEOUT_SECONDS (60), MCP_TOOL_RATE_LIMIT (calls per minute per server, 60,
 *   0 = unlimited): defaults of every server, overridden per server in the file.
 * - TOOL_SOURCES_MAX_PER_USER (20): MCP servers and OpenAPI documents one user may register.
 * - OPENAPI_MAX_SPEC_BYTES (2 MB), OPENAPI_TOOL_TIMEOUT_SECONDS (30).
 *
 * File format (unknown keys are refused naming their path, e.g. `servers.github.urll`):
 *   servers:
 *     <name>: { url, headers?, timeout_seconds?, rate_limit_per_minute? }            # streamable HTTP
 *     <name>: { command, args?, env?, cwd?, timeout_seconds?, rate_limit_per_minute? } # stdio
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { num, str, unset, type Env } from './env.js';
import { ConfigError } from './errors.js';

export const DEFAULT_MCP_CONFIG_PATH = './config/mcp.yaml';
/** Server names, as they appear in tool names (`mcp.<server>.<tool>`). */
export const TOOL_SOURCE_NAME = /^[A-Za-z0-9_-]{1,40}$/;

/** One MCP server: how to reach it and the limits of its tools. */
export interface McpServerDef {
  name: string;
  transport:
    | { kind: 'http'; url: string; headers: Record<string, string> }
    /** `env` is added to a minimal default environment (PATH, HOME, ...), not to this process's. */
    | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string };
  /** Time limit of one tool call (and of connecting). */
  timeoutMs: number;
  /** Calls per minute across the server's tools; 0 = unlimited. */
  rateLimitPerMinute: number;
}

const SERVER_KEYS = {
  http: ['url', 'headers', 'timeout_seconds', 'rate_limit_per_minute'],
  stdio: ['command', 'args', 'env', 'cwd', 'timeout_seconds', 'rate_limit_per_minute'],
} as const;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MAX_TIMEOUT_SECONDS = 3600;

export function toolSourcesConfig(env: Env = process.env) {
  const mcpTimeoutSeconds = num(env, 'MCP_TOOL_TIMEOUT_SECONDS', 60, { min: 1, max: MAX_TIMEOUT_SECONDS, int: true });
  const mcpRateLimit = num(env, 'MCP_TOOL_RATE_LIMIT', 60, { min: 0, int: true });
  const path = str(env, 'MCP_CONFIG_PATH', DEFAULT_MCP_CONFIG_PATH);
  return {
    mcp: {
      configPath: path,
      /** Defaults of servers that set no limits of their own (users' servers too). */
      timeoutMs: mcpTimeoutSeconds * 1000,
      rateLimitPerMinute: mcpRateLimit,
      /** The operator's servers (config/mcp.yaml). */
      servers: loadMcpServers(path, !unset(env.MCP_CONFIG_PATH), env, { timeoutMs: mcpTimeoutSeconds * 1000, rateLimitPerMinute: mcpRateLimit }),
    },
    /** MCP servers plus OpenAPI documents one user may register. */
    maxPerUser: num(env, 'TOOL_SOURCES_MAX_PER_USER', 20, { min: 0, int: true }),
    openapi: {
      maxSpecBytes: num(env, 'OPENAPI_MAX_SPEC_BYTES', 2 * 1024 * 1024, { min: 1024, int: true }),
      timeoutMs: num(env, 'OPENAPI_TOOL_TIMEOUT_SECONDS', 30, { min: 1, max: MAX_TIMEOUT_SECONDS, int: true }) * 1000,
    },
  };
}
export type ToolSourcesConfig = ReturnType<typeof toolSourcesConfig>;

/**
 * Reads the operator's MCP servers; `named`: the operator set MCP_CONFIG_PATH (then the file
 * must exist). Every refusal names MCP_CONFIG_PATH, the file and the key path.
 */
export function loadMcpServers(path: string, named: boolean, env: Env, defaults: Pick<McpServerDef, 'timeoutMs' | 'rateLimitPerMinute'>): McpServerDef[] {
  const fail = (reason: string): never => {
    throw new ConfigError('MCP_CONFIG_PATH', `${path}: ${reason}`);
  };
  if (!existsSync(path)) return named ? fail('does not exist') : [];
  let doc: unknown;
  try {
    doc = parse(readFileSync(path, 'utf8'));
  } catch (err) {
    return fail(`not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return [];
  if (!isMapping(doc)) return fail('must be a mapping with a `servers` section');
  for (const k of Object.keys(doc)) if (k !== 'servers') fail(`${k} is not a setting (known: servers)`);
  if (doc.servers === null || doc.servers === undefined) return [];
  if (!isMapping(doc.servers)) return fail('servers must map server names to their settings');
  return Object.entries(doc.servers).map(([name, raw]) => serverDef(name, raw, env, defaults, fail));
}

function serverDef(
  name: string,
  raw: unknown,
  env: Env,
  defaults: Pick<McpServerDef, 'timeoutMs' | 'rateLimitPerMinute'>,
  fail: (r: string) => never,
): McpServerDef {
  const at = `servers.${name}`;
  if (!TOOL_SOURCE_NAME.test(name)) fail(`${at}: a server name is 1 to 40 letters, digits, _ or -`);
  if (!isMapping(raw)) return fail(`${at} must be a mapping (url or command, ...)`);
  if ((raw.url === undefined) === (raw.command === undefined)) fail(`${at} needs exactly one of url (streamable HTTP) or command (stdio)`);
  const kind = raw.url !== undefined ? 'http' : 'stdio';
  const known: readonly string[] = SERVER_KEYS[kind];
  for (const k of Object.keys(raw)) if (!known.includes(k)) fail(`${at}.${k} is not a setting (known for ${kind} servers: ${known.join(', ')})`);

  const text = (v: unknown, key: string): string => {
    if (typeof v !== 'string' || v.trim() === '') return fail(`${key} must be a non-empty string`);
    return expand(v, key, env, fail);
  };
  const strings = (v: unknown, key: string): string[] => {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) return fail(`${key} must be a list of strings`);
    return v.map((x, i) => (typeof x === 'string' ? expand(x, `${key}[${i}]`, env, fail) : fail(`${key}[${i}] must be a string`)));
  };
  const stringMap = (v: unknown, key: string, keyRule?: RegExp): Record<string, string> => {
    if (v === undefined || v === null) return {};
    if (!isMapping(v)) return fail(`${key} must be a mapping of names to strings`);
    const out: Record<string, string> = {};
    for (const [k, x] of Object.entries(v)) {
      if (keyRule && !keyRule.test(k)) fail(`${key}.${k} is not a valid name`);
      if (typeof x !== 'string') fail(`${key}.${k} must be a string (quote it)`);
      out[k] = expand(x as string, `${key}.${k}`, env, fail);
    }
    return out;
  };
  const int = (v: unknown, key: string, min: number, max: number, def: number): number => {
    if (v === undefined || v === null) return def;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail(`${key} must be an integer from ${min} to ${max}`);
    return v as number;
  };

  let transport: McpServerDef['transport'];
  if (kind === 'http') {
    const url = text(raw.url, `${at}.url`);
    let u: URL | undefined;
    try {
      u = new URL(url);
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) fail(`${at}.url must be an http(s) URL`);
    transport = { kind, url, headers: stringMap(raw.headers, `${at}.headers`, HEADER_NAME) };
  } else {
    transport = {
      kind,
      command: text(raw.command, `${at}.command`),
      args: strings(raw.args, `${at}.args`),
      env: stringMap(raw.env, `${at}.env`, /^[A-Za-z_][A-Za-z0-9_]*$/),
      ...(raw.cwd === undefined || raw.cwd === null ? {} : { cwd: text(raw.cwd, `${at}.cwd`) }),
    };
  }
  return {
    name,
    transport,
    timeoutMs: int(raw.timeout_seconds, `${at}.timeout_seconds`, 1, MAX_TIMEOUT_SECONDS, defaults.timeoutMs / 1000) * 1000,
    rateLimitPerMinute: int(raw.rate_limit_per_minute, `${at}.rate_limit_per_minute`, 0, 1_000_000, defaults.rateLimitPerMinute),
  };
}

/** `${VAR}` → the variable's value; a variable that is not set is refused, naming it. */
function expand(v: string, key: string, env: Env, fail: (r: string) => never): string {
  return v.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const value = env[name];
    return unset(value) ? fail(`${key} uses \${${name}}, but ${name} is not set`) : value;
  });
}

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
