/**
 * The process's secrets when configuration does not give them: generated once and kept in
 * DATA_DIR (secretFileIn), so a single machine needs no setup and a restart keeps them.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../config/index.js';
import { secretFileIn, type Logger } from '../kernel/index.js';

/** JWT secret: JWT_SECRET, else one generated once and kept in DATA_DIR (single machine). */
export function jwtSecretOf(cfg: Config, dataDir: string, log: Logger): string {
  if (cfg.auth.jwtSecret) return cfg.auth.jwtSecret;
  const s = secretFileIn(dataDir, 'jwt-secret', () => randomBytes(48).toString('base64url'));
  if (s.created && cfg.environment === 'prod') log.warn('JWT_SECRET is not set: generated one in DATA_DIR; set JWT_SECRET to share it between gateways');
  return s.value;
}

/** INTERNAL_RPC_TOKEN, else one generated once in DATA_DIR/internal-rpc-token (secretFileIn). */
export function internalRpcTokenOf(cfg: Config, dataDir: string, log: Logger): string {
  if (cfg.rpc.token) return cfg.rpc.token;
  const s = secretFileIn(dataDir, 'internal-rpc-token', () => randomBytes(48).toString('base64url'));
  if (s.created && (cfg.gateway.orchestratorUrl || !['127.0.0.1', '::1', 'localhost'].includes(cfg.rpc.host))) {
    log.warn('INTERNAL_RPC_TOKEN is not set: generated one in DATA_DIR; give every process on another machine the same INTERNAL_RPC_TOKEN');
  }
  if (s.value.length < 32) throw new Error(`${s.file} holds no usable internal RPC token: delete it, or set INTERNAL_RPC_TOKEN`);
  return s.value;
}
