import { ConfigError } from './errors.js';
import { optStr, str, type Env } from './env.js';

/**
 * The `channels` slice, also usable on its own (the gateway falls back to it when the process
 * wiring passes no channels settings).
 * - CHANNEL_SECRET_KEY: the AES-256-GCM key of channel credentials at rest, 32 bytes as 64 hex
 *   digits or base64. Unset: one generated once into DATA_DIR/channel-secret.key (mode 0600);
 *   gateways on several machines must share it, so production sets it.
 * - PLATFORM_A_API_URL, PLATFORM_B_API_URL: base URLs of the platforms' outbound APIs (neutral
 *   placeholders by default: set the real platform's URL in deployment; tests use local servers).
 */
export function channelsConfig(env: Env = process.env) {
  const secretKey = optStr(env, 'CHANNEL_SECRET_KEY');
  if (secretKey !== undefined) {
    const hex = /^[0-9a-fA-F]{64}$/.test(secretKey);
    const bytes = hex ? 32 : Buffer.from(secretKey, 'base64').length;
    if (bytes !== 32 || (!hex && !/^[A-Za-z0-9+/_-]+={0,2}$/.test(secretKey))) {
      throw new ConfigError('CHANNEL_SECRET_KEY', 'must be 32 bytes, as 64 hex digits or base64');
    }
  }
  return {
    secretKey,
    dataDir: str(env, 'DATA_DIR', './data'),
    platformAApiUrl: str(env, 'PLATFORM_A_API_URL', 'https://api.platform-a.example'),
    platformBApiUrl: str(env, 'PLATFORM_B_API_URL', 'https://api.platform-b.example'),
  };
}
export type ChannelsConfig = ReturnType<typeof channelsConfig>;
