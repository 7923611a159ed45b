/**
 * The contract every tool implements (one file per built-in tool). The registry
 * (`./registry.ts`) lists, validates arguments against `parameters`, applies rate limits and
 * timeouts, and records usage; a tool only does its work.
 */

/** JSON Schema of a tool's arguments: always an object schema. */
export interface ToolParameters {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  additionalProperties?: boolean;
}

export interface ToolContext {
  /** Aborted when the call's time limit passes or its task is cancelled; tools must stop. */
  signal: AbortSignal;
  /** The session whose workspace file tools work in (absent: no workspace). */
  sessionId?: string;
  userId?: string;
  /** The caller's tenant, when known: recorded with what a tool stores for its owner (blobs). */
  tenantId?: string;
}

/** What a tool returns: `output` is the structured result, `text` what a model reads. */
export interface ToolOutput {
  output: Record<string, unknown>;
  text: string;
  metadata?: Record<string, unknown>;
  /** Cost of this call when it differs from the tool's `costPerUse` (USD). */
  costUsd?: number;
}

export interface Tool<A extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  description: string;
  /** e.g. `search`, `code`, `data`, `web`, `file`, `math`. */
  category: string;
  version: string;
  parameters: ToolParameters;
  /** Maximum execution time of one call. */
  timeoutMs: number;
  /** Estimated USD per call. */
  costPerUse: number;
  /** Never listed, never executed directly; inside workflows only where a role allows it. */
  dangerous: boolean;
  /** False when the operator has not enabled it (bash without TOOLS_ENABLE_BASH): not offered to models. */
  available?: boolean;
  /** The setting that holds its calls-per-minute limit, if rate limited (e.g. WEB_SEARCH_RATE_LIMIT). */
  rateLimitSetting?: string;
  /**
   * A limit of its own instead (tools that come from elsewhere: an MCP server, an OpenAPI
   * document): calls per minute, counted under `key` (shared by the tools of one source).
   */
  rateLimit?: { perMinute: number; key: string };
  /**
   * Whether a call cut off by a crash may run again: true for reads without side effects.
   * When false, a cut-off call is recorded as interrupted and the model is told so.
   */
  retryable: boolean;
  /**
   * Readies what the tool runs on (a warm worker thread) before its time limit starts; cheap
   * when it is ready. Aborted with the call; bounded by the tool itself.
   */
  prepare?(signal: AbortSignal): Promise<void>;
  run(args: A, ctx: ToolContext): Promise<ToolOutput>;
}

/** A failure a tool reports to its caller (the model or the API client) in plain words. */
export class ToolError extends Error {
  constructor(
    message: string,
    /**
     * Backend unreachable or misconfigured (HTTP 502 on direct execution) rather than bad
     * arguments; `failed`: the tool ran and reported a failure of its own (an MCP tool's
     * `isError` result, an API's 4xx answer), a result like any other.
     */
    readonly kind: 'bad_arguments' | 'backend' | 'not_configured' | 'limit' | 'failed' = 'backend',
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/**
 * A model call a tool may make (agents of the catalogue that analyse what a vendor returned:
 * ad creatives, landing pages, sentiment). Wired by the app to the service's LLM provider, so
 * the offline provider's label reaches the tool's output unchanged.
 */
export interface ToolModelRequest {
  system?: string;
  prompt: string;
  maxTokens?: number;
  tier?: 'small' | 'medium' | 'large';
  signal: AbortSignal;
}
export interface ToolModelResult {
  text: string;
  model: string;
  provider: string;
  tokens: number;
  /** What the call cost (USD), as the model layer priced it. */
  costUsd?: number;
}
export type ToolModel = (req: ToolModelRequest) => Promise<ToolModelResult>;
